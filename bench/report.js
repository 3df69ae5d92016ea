'use strict';
/** The BENCHMARKS.md table from a results file: medians with min and max over rounds, and ratios. */
const { overRounds } = require('./lib/stats');

const SYSTEMS = { embedded: 'stageflow-embedded', cluster: 'stageflow-cluster', peer: 'peer' };
const SHARED = /\(shared/;

function phaseRuns(results, system, phase) {
  return results.rounds.filter((r) => r.ok && r.system === system && r.phases?.[phase]).map((r) => r.phases[phase].figures);
}

/** Over rounds; `wholePhase` when some round had no steady window (throughput over the whole phase). */
function summarize(results, system, phase, pick) {
  const runs = phaseRuns(results, system, phase);
  const s = overRounds(runs.map(pick));
  return s && runs.some((f) => f.steady === false) ? { ...s, wholePhase: true } : s;
}

function fmt(s, unit = '') {
  if (!s) return 'not measured';
  if (s.wholePhase) return `${fmt({ ...s, wholePhase: false }, unit)} †`;
  const n = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1));
  return s.n > 1 ? `${n(s.median)}${unit} (${n(s.min)}–${n(s.max)})` : `${n(s.median)}${unit}`;
}

function ratio(ours, peer) {
  if (!ours || !peer || peer.median === 0) return '—';
  return `${(ours.median / peer.median).toFixed(2)}×`;
}

const ownTotal = (field) => (f) => {
  const values = Object.entries(f[field]).filter(([name, v]) => !SHARED.test(name) && typeof v === 'number');
  return values.length ? values.reduce((sum, [, v]) => sum + v, 0) : null;
};

function mainTable(results) {
  const rows = [
    ['Verified stage attempts/s (steady state)', 'main', (f) => f.attempts_per_s, ''],
    ['Success → successor start, p50', 'main', (f) => f.handoff_p50_ms, ' ms'],
    ['Success → successor start, p99', 'main', (f) => f.handoff_p99_ms, ' ms'],
    ['Projection lag (append → row in Postgres), p50', 'main', (f) => f.projection_lag_p50_ms, ' ms'],
    ['Projection lag, p99', 'main', (f) => f.projection_lag_p99_ms, ' ms'],
    ['CPU s per 1,000 verified attempts, own processes', 'main', ownTotal('cpu_s_per_1000_attempts'), ' s'],
    ['CPU s per 1,000 verified attempts, shared Postgres', 'main', (f) => f.cpu_s_per_1000_attempts['postgres (shared, all backends)'] ?? null, ' s'],
    ['Peak RSS, own processes summed', 'main', ownTotal('peak_rss_mib'), ' MiB'],
    ['Verifier scaling: 1 replica, `sleep 0.02` check, attempts/s', 'scale-1', (f) => f.attempts_per_s, ''],
    ['Verifier scaling: 2 replicas, attempts/s', 'scale-2', (f) => f.attempts_per_s, ''],
    ['Verifier scaling: 4 replicas, attempts/s', 'scale-4', (f) => f.attempts_per_s, ''],
  ];
  const lines = [
    '| Metric | Stageflow embedded | Stageflow NATS + Postgres | Peer (Graphile Worker) | embedded ÷ peer | NATS+PG ÷ peer |',
    '|---|---|---|---|---|---|',
  ];
  for (const [label, phase, pick, unit] of rows) {
    const e = summarize(results, SYSTEMS.embedded, phase, pick);
    const c = summarize(results, SYSTEMS.cluster, phase, pick);
    const p = summarize(results, SYSTEMS.peer, phase, pick);
    const embeddedCell = phase === 'main' ? fmt(e, unit) : 'n/a (one process)';
    lines.push(`| ${label} | ${embeddedCell} | ${fmt(c, unit)} | ${fmt(p, unit)} | ${phase === 'main' ? ratio(e, p) : '—'} | ${ratio(c, p)} |`);
  }
  return lines.join('\n');
}

function processTable(results) {
  const lines = ['| System | Phase | Process | CPU s per 1,000 verified attempts | Peak RSS |', '|---|---|---|---|---|'];
  for (const system of Object.values(SYSTEMS)) {
    for (const phase of ['main', 'scale-1', 'scale-2', 'scale-4']) {
      const runs = phaseRuns(results, system, phase);
      if (runs.length === 0) continue;
      const names = [...new Set(runs.flatMap((f) => [...Object.keys(f.cpu_s_per_1000_attempts), ...Object.keys(f.peak_rss_mib)]))];
      for (const name of names) {
        const cpu = overRounds(runs.map((f) => f.cpu_s_per_1000_attempts[name] ?? null));
        const rss = overRounds(runs.map((f) => f.peak_rss_mib[name] ?? null));
        lines.push(`| ${system} | ${phase} | ${name} | ${fmt(cpu, ' s')} | ${rss ? fmt(rss, ' MiB') : '—'} |`);
      }
    }
  }
  return lines.join('\n');
}

function renderReport(results, resultsFile) {
  const m = results.machine;
  const failed = results.rounds.filter((r) => !r.ok);
  const roundsOf = (system) => results.rounds.filter((r) => r.ok && r.system === system).length;
  return `# Benchmarks

Produced by \`npm run bench\` on ${results.date.slice(0, 10)} (${results.mode} run, ${Math.round(results.duration_s / 60)} min); raw results: \`${resultsFile}\`.
Rerun it whenever a hot path changes. Figures are the median over rounds with (min–max);
ratios are our median over the peer's (for throughput higher is better, for everything else lower is better).

**Machine.** ${m.cores} cores (${m.cpu}), ${m.memory_gib} GiB memory, Linux ${m.kernel}. Node ${m.versions.node},
nats-server ${m.versions.nats_server}, PostgreSQL ${m.versions.postgres}, Graphile Worker ${m.versions.graphile_worker},
Stageflow commit ${m.versions.stageflow_commit}. Load average (1, 5, 15 min) at start ${m.load_average_at_start.join(', ')}, at end
${m.load_average_at_end.join(', ')}: **the machine was shared with other engineers' builds and tests during the run**, so
absolute figures are depressed and noisy; the alternation of the systems spreads that noise over both.

**Size.** ${results.size.rounds} rounds per system (successful: embedded ${roundsOf(SYSTEMS.embedded)}, NATS+PG ${roundsOf(SYSTEMS.cluster)}, peer ${roundsOf(SYSTEMS.peer)});
per round ${results.size.main.runs} runs (${results.size.main.runs * 3} stage attempts) from ${results.size.main.clients} closed-loop clients, and per scaling step
${results.size.scaling.runs} runs from ${results.size.scaling.clients} clients.${failed.length ? `\n\n**Failed rounds:** ${failed.map((r) => `round ${r.round} ${r.system}: ${String(r.error).split('\n')[0]}`).join('; ')}.` : ''}

${mainTable(results)}

† No steady window (too few runs in the step to leave out warm-up and drain): throughput over the whole step,
from its first CPU sample to its last run's end, warm-up and drain included.

## Per process

${processTable(results)}

## What each number includes

- **Workload.** N runs of a three-stage linear pipeline (\`bench/workload/\`), script agent: each stage writes one
  small artifact and emits a payload; after-phase checks \`artifact\` (nonempty), \`payload_schema\` and \`command: true\`.
  Clients run a closed loop: submit a run, wait until it finishes, submit the next.
- **Stageflow embedded**: \`startEngine\` (scheduler, recovery, verifier, agent-runner in one process, embedded SQLite
  log, its defaults: agent concurrency 4, verifier concurrency 1) plus the API's read models (\`openReadModels\`:
  the projector into the embedded PGlite, which runs as a child process). The clients run in the same process,
  so its CPU and RSS include them. Runs are submitted with \`runs.execute(…decideRequest…)\` as \`sf run\` does.
- **Stageflow NATS + Postgres**: \`node bin/sf.js serve <service>\` per service (scheduler, recovery, agent-runner,
  verifier replicas, api) with its default log level, a fresh namespace per round; the harness submits through
  the JetStream log and is not counted. The API's projector writes the read models into Postgres.
- **Peer**: Graphile Worker ${m.versions.graphile_worker} on the same Postgres (own schemas). A \`stage\` job per attempt writes the
  artifact and payload file and enqueues \`verify\`; \`verify\` spawns \`bash -c true\` (process group, piped output, as
  Stageflow's command check does), reads the artifact (non-whitespace) and validates the payload with ajv, then in
  one transaction records the verification row and enqueues the next stage (\`add_job\` on the job's client) or
  notifies completion. Same concurrency as Stageflow: \`stage\` 4, \`verify\` 1 per process. Stage and verify runners
  and the clients share one process, except in the scaling steps (verify runners as separate processes).
  The peer does **not** do what Stageflow does beyond that: no event log, no fresh git checkout per run, no sealed
  snapshot of the attempt's files, no evidence records or read-model projection.
- **Attempts/s**: verified attempts (\`AttemptVerified\` passed; for the peer, verification rows) inside the steady
  window divided by its length. The window starts after the first 10 % of verified attempts (warm-up) and ends when
  the last run was submitted (the loop drains after that), aligned to 200 ms CPU samples.
- **Success → successor start**: the log's stored time of the message with \`StageSucceeded\` of stage *k* to the
  stored time of the message with \`StageAttemptStarted\` of stage *k+1* (attempt 1); for the peer, the verification
  row's commit-time clock to the next \`stage\` job's start. Both include the queue pickup.
- **Projection lag**: per appended run-event message, the first observation of the projector checkpoint at or past
  its sequence minus the log's stored time (checkpoint and rows commit in one transaction). NATS+PG: the
  checkpoint row polled in Postgres every 10 ms; embedded: the projector's committed checkpoint observed in-process
  every 5 ms. Resolution is that polling period; the projector idles 250 ms between polls when caught up, which
  dominates the figure. The peer writes its rows in the job's own transaction, so it has no projection lag to measure.
- **CPU** per process: utime+stime from \`/proc/<pid>/stat\` (the in-process engine and the peer's own process:
  \`process.cpuUsage()\`) over the steady window, per 1,000 verified attempts in it. *Shared* rows (Postgres:
  postmaster with reaped backends plus live backends; nats-server) are whole-server figures and include other
  engineers' load on the same servers; they are not part of the "own processes" sum.
- **Peak RSS**: VmHWM from \`/proc/<pid>/status\` at the end of the phase (the process's lifetime peak, so later
  phases of a round include earlier ones); in-process: \`process.resourceUsage().maxRSS\`.
- **Verifier scaling**: NATS+PG with 1, 2, then 4 verifier processes (added between steps, same deployment), the
  pipeline \`bench/workload/bench-io.pipeline.yaml\` whose command check is \`sleep 0.02\`; the peer with 1, 2, 4
  \`verify\`-only Graphile Worker processes. The other services stay single, so a step can be limited by them.
`;
}

module.exports = { renderReport };

// `node bench/report.js <results.json>` prints the table of an earlier run again.
if (require.main === module) {
  const file = process.argv[2];
  process.stdout.write(renderReport(JSON.parse(require('node:fs').readFileSync(file, 'utf8')), file));
}
