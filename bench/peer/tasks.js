'use strict';
/**
 * The peer's tasks on Graphile Worker: the same work as a Stageflow stage attempt and its
 * verification, with no event log. `stage` writes the attempt's artifact and payload and enqueues
 * `verify`; `verify` runs the same three checks (the artifact is nonempty, the payload matches the
 * output schema, the command exits 0) and, in one transaction, records the verification and
 * enqueues the next stage (or, after the last stage, notifies the run's completion).
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs/promises');
const path = require('node:path');
const Ajv = require('ajv');

const STAGES = ['plan', 'build', 'ship'];
const OUTPUT_SCHEMA = { type: 'object', properties: { file: { type: 'string' }, stage: { type: 'string' } }, required: ['file', 'stage'] };
const validatePayload = new Ajv({ allErrors: true }).compile(OUTPUT_SCHEMA);

function attemptDir(root, runId, stage) {
  return path.join(root, runId, 'stages', stage, 'attempts', '1');
}

/** `bash -c <command>` in its own process group with piped output, as Stageflow's command check runs it. */
function runCommand(command, cwd) {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { cwd, env: { PATH: process.env.PATH ?? '' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.once('error', () => resolve(false));
    child.once('close', (code) => resolve(code === 0));
  });
}

function makeTasks({ runsDir, schema }) {
  return {
    stage: async (payload, helpers) => {
      const startedAt = Date.now();
      const dir = attemptDir(runsDir, payload.runId, payload.stage);
      await fs.mkdir(path.join(dir, 'artifacts'), { recursive: true });
      await fs.writeFile(path.join(dir, 'artifacts', `${payload.stage}.md`), `# ${payload.stage}\n\nbenchmark artifact of stage ${payload.stage}.\n`);
      await fs.writeFile(path.join(dir, 'payload.json'), JSON.stringify({ file: `${payload.stage}.md`, stage: payload.stage }));
      await helpers.addJob('verify', { ...payload, startedAt });
    },
    verify: async (payload, helpers) => {
      const dir = attemptDir(runsDir, payload.runId, payload.stage);
      const artifacts = path.join(dir, 'artifacts');
      const [artifact, payloadValid, command] = await Promise.all([
        fs.readFile(path.join(artifacts, `${payload.stage}.md`), 'utf8').then((text) => text.trim().length > 0, () => false),
        fs.readFile(path.join(dir, 'payload.json'), 'utf8').then((text) => validatePayload(JSON.parse(text)), () => false),
        runCommand(payload.command, artifacts),
      ]);
      const passed = artifact && payloadValid && command;
      if (!passed) throw new Error(`verification failed: artifact ${artifact}, payload ${payloadValid}, command ${command}`);
      const next = STAGES[STAGES.indexOf(payload.stage) + 1];
      await helpers.withPgClient(async (client) => {
        await client.query('begin');
        try {
          await client.query(
            'insert into bench_peer.verifications (run_id, stage, started_at, verified_at, checks) values ($1, $2, to_timestamp($3 / 1000.0), clock_timestamp(), $4)',
            [payload.runId, payload.stage, payload.startedAt, JSON.stringify({ artifact, payloadValid, command })],
          );
          if (next) await client.query(`select ${schema}.add_job('stage', $1::json)`, [JSON.stringify({ runId: payload.runId, stage: next, command: payload.command })]);
          else await client.query("select pg_notify('bench_peer_done', $1)", [payload.runId]);
          await client.query('commit');
        } catch (err) {
          await client.query('rollback');
          throw err;
        }
      });
    },
  };
}

module.exports = { makeTasks, STAGES };
