'use strict';
/**
 * `npm run bench [-- --quick]`: Stageflow (embedded default, and NATS + Postgres with a process per
 * service) and the peer (Graphile Worker) on the same workload, alternating, one system at a
 * time, several rounds each. Writes bench/results/<timestamp>.json and the table in BENCHMARKS.md.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { describeMachine, ROOT } = require('./lib/machine');
const { runRound } = require('./lib/rounds');
const { renderReport } = require('./report');

const quick = process.argv.includes('--quick');
const NATS_URL = process.env.SF_BENCH_NATS_URL ?? process.env.SF_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const DATABASE_URL = process.env.SF_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/sf_bench';
const WORKLOAD = path.join(__dirname, 'workload');

const SIZE = quick
  ? { rounds: 1, main: { runs: 3, clients: 2 }, scaling: { runs: 2, clients: 2 }, timeoutMs: 90_000 }
  : { rounds: 3, main: { runs: 15, clients: 5 }, scaling: { runs: 6, clients: 6 }, timeoutMs: 600_000 };
const REPLICAS = [1, 2, 4];

async function ensureDatabase() {
  const { Client } = require('pg');
  const url = new URL(DATABASE_URL);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) await admin.query(`create database "${name.replace(/"/g, '""')}"`);
  } finally {
    await admin.end();
  }
}

/** Sections of BENCHMARKS.md that other commands write (`npm run bench:sandbox`): kept as they are. */
function keptSections(file) {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const at = text.indexOf('\n## Sandbox\n');
  return at < 0 ? '' : text.slice(at);
}

function roundsPlan() {
  const scale = (k, command) => ({ name: `scale-${k}`, ...SIZE.scaling, verifiers: k, command, pipeline: path.join(WORKLOAD, 'bench-io.pipeline.yaml') });
  const agentScript = path.join(WORKLOAD, 'agent.script.yaml');
  return [
    {
      system: 'stageflow-embedded',
      script: path.join(__dirname, 'stageflow', 'embedded-round.js'),
      spec: { phase: 'main', ...SIZE.main, agentScript, pipeline: path.join(WORKLOAD, 'bench.pipeline.yaml'), timeoutMs: SIZE.timeoutMs },
    },
    {
      system: 'peer',
      script: path.join(__dirname, 'peer', 'round.js'),
      spec: { databaseUrl: DATABASE_URL, timeoutMs: SIZE.timeoutMs, phases: [{ name: 'main', ...SIZE.main, verifiers: 0, command: 'true' }, ...REPLICAS.map((k) => scale(k, 'sleep 0.02'))] },
    },
    {
      system: 'stageflow-cluster',
      script: path.join(__dirname, 'stageflow', 'cluster-round.js'),
      spec: {
        natsUrl: NATS_URL,
        databaseUrl: DATABASE_URL,
        agentScript,
        timeoutMs: SIZE.timeoutMs,
        phases: [{ name: 'main', ...SIZE.main, verifiers: 1, pipeline: path.join(WORKLOAD, 'bench.pipeline.yaml') }, ...REPLICAS.map((k) => scale(k))],
      },
    },
  ];
}

async function main() {
  const began = Date.now();
  await ensureDatabase();
  const machine = await describeMachine(DATABASE_URL);
  const rounds = [];
  for (let r = 1; r <= SIZE.rounds; r++) {
    for (const plan of roundsPlan()) {
      const t0 = Date.now();
      process.stderr.write(`bench: round ${r}/${SIZE.rounds} ${plan.system} ...`);
      const result = await runRound(plan.script, plan.spec);
      process.stderr.write(` ${result.ok ? 'ok' : 'FAILED'} in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
      if (!result.ok) process.stderr.write(`${result.error}\n`);
      rounds.push({ round: r, system: plan.system, seconds: Math.round((Date.now() - t0) / 1000), ...result });
    }
  }
  const results = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    duration_s: Math.round((Date.now() - began) / 1000),
    machine: { ...machine, load_average_at_end: os.loadavg().map((l) => Math.round(l * 100) / 100) },
    size: SIZE,
    rounds,
  };
  // A quick run (CI) keeps its raw results out of the tree.
  const resultsDir = quick ? fs.mkdtempSync(path.join(os.tmpdir(), 'sf-bench-results-')) : path.join(__dirname, 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${results.date.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  const report = renderReport(results, quick ? file : path.relative(ROOT, file));
  if (!quick) fs.writeFileSync(path.join(ROOT, 'BENCHMARKS.md'), report + keptSections(path.join(ROOT, 'BENCHMARKS.md')));
  process.stdout.write(report);
  process.stderr.write(`bench: ${results.duration_s} s; raw results in ${quick ? file : path.relative(ROOT, file)}${quick ? '' : '; table in BENCHMARKS.md'}\n`);
  if (rounds.some((r) => !r.ok)) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
