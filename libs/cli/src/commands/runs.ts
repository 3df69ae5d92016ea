import type { Command } from 'commander';
import { decideOperator, FEEDBACK_DECISIONS, foldRun, runStatus, type OperatorAnswer, type OperatorCommand, type RunEvent, type RunState } from '@stageflow/domain';
import { parseAgentSpec } from '@stageflow/runtime';
import { formatTranscript, formatVerification, loadConfig, runIdOf, transcriptReport, verificationReport, type Infrastructure } from '@stageflow/runtime';
import { cliSummary } from '../cli-summary';
import { exitCodeFor } from '../exit-codes';
import { UsageError, type Output } from '../output';
import { board } from '../progress';
import { openLog, openSession, runInForeground } from '../session';
import { decideOnServer, listOnServer, showOnServer, verifyOnServer } from '../remote/runs';

async function withLog<T>(fn: (infra: Infrastructure) => Promise<T>): Promise<T> {
  const infra = await openLog();
  try {
    return await fn(infra);
  } finally {
    await infra.close();
  }
}

async function loadExisting(infra: Infrastructure, runId: string): Promise<RunState> {
  const { state } = await infra.runs.load(runId);
  if (!state.exists) throw new UsageError(`run ${runId} not found`);
  return state;
}

const operator = () => `cli:${process.env.USER ?? 'unknown'}`;

export function registerRuns(program: Command, out: Output, setExit: (code: number) => void): void {
  const runs = program.command('runs').description('inspect runs and decide for them');

  runs
    .command('list')
    .description('list runs, newest first')
    .option('--status <status>', 'only runs with this status')
    .option('--pipeline <id>', 'only runs of this pipeline')
    .option('--limit <n>', 'at most n runs', '50')
    .option('--json', 'print JSON')
    .option('--server <api-url>', 'a cluster\'s API (token from SF_API_TOKEN) instead of the log')
    .action(async (flags: { status?: string; pipeline?: string; limit: string; json?: boolean; server?: string }) => {
      if (flags.server !== undefined) return setExit(await listOnServer(flags.server, { status: flags.status, pipeline: flags.pipeline, limit: flags.limit }, out, Boolean(flags.json)));
      const summaries = await withLog(async (infra) => {
        const messages = await infra.log.read(infra.runs.subject('*'));
        const byRun = new Map<string, RunEvent[]>();
        for (const m of messages) {
          const id = runIdOf(m.subject);
          const events = byRun.get(id) ?? [];
          events.push(...infra.runs.eventsOf(m));
          byRun.set(id, events);
        }
        return [...byRun.values()].map((events) => foldRun(events)).filter((s) => s.exists);
      });
      const rows = summaries
        .filter((s) => !flags.status || runStatus(s) === flags.status)
        .filter((s) => !flags.pipeline || s.pipeline.id === flags.pipeline)
        .sort((a, b) => b.requestedAt.localeCompare(a.requestedAt))
        .slice(0, Number(flags.limit))
        .map((s) => ({ run_id: s.runId, pipeline: s.pipeline.id, status: runStatus(s), started_at: s.requestedAt, finished_at: s.finishedAt ?? null }));
      if (flags.json) out.out(JSON.stringify({ runs: rows }, null, 2));
      else out.out(rows.length ? rows.map((r) => `${r.run_id}  ${r.pipeline}  ${r.status}  ${r.started_at}`).join('\n') : 'no runs');
      setExit(0);
    });

  runs
    .command('show')
    .description('show a run\'s summary')
    .requiredOption('--run <id>', 'run id')
    .option('--json', 'print the run summary as JSON')
    .option('--include <what>', '"stages" adds each stage\'s envelope')
    .option('--server <api-url>', 'a cluster\'s API (token from SF_API_TOKEN) instead of the log')
    .action(async (flags: { run: string; json?: boolean; include?: string; server?: string }) => {
      if (flags.server !== undefined) return setExit(await showOnServer(flags.server, flags.run, out, { json: Boolean(flags.json), includeStages: flags.include === 'stages' }));
      const state = await withLog((infra) => loadExisting(infra, flags.run));
      const summary = cliSummary(state, loadConfig(), flags.include === 'stages');
      out.out(flags.json ? JSON.stringify(summary, null, 2) : board(summary));
      setExit(exitCodeFor(runStatus(state)));
    });

  runs
    .command('verify')
    .description('every attempt of a stage with its checks, status and evidence')
    .requiredOption('--run <id>', 'run id')
    .requiredOption('--stage <id>', 'stage id')
    .option('--json', 'print JSON')
    .option('--server <api-url>', 'a cluster\'s API (token from SF_API_TOKEN) instead of the log')
    .action(async (flags: { run: string; stage: string; json?: boolean; server?: string }) => {
      if (flags.server !== undefined) return setExit(await verifyOnServer(flags.server, flags.run, flags.stage, out, Boolean(flags.json)));
      const report = await withLog(async (infra) => verificationReport(await loadExisting(infra, flags.run), flags.stage, infra.blobs));
      out.out(flags.json ? JSON.stringify(report, null, 2) : formatVerification(report));
      setExit(0);
    });

  runs
    .command('transcript')
    .description('an attempt\'s recorded agent turns: input, tool calls with arguments and results, result (secrets redacted)')
    .requiredOption('--run <id>', 'run id')
    .requiredOption('--stage <id>', 'stage id')
    .requiredOption('--attempt <n>', 'attempt number', (v) => Number.parseInt(v, 10))
    .option('--json', 'print JSON')
    .action(async (flags: { run: string; stage: string; attempt: number; json?: boolean }) => {
      const report = await withLog(async (infra) => transcriptReport(await loadExisting(infra, flags.run), flags.stage, flags.attempt, infra.blobs));
      out.out(flags.json ? JSON.stringify(report, null, 2) : formatTranscript(report));
      setExit(0);
    });

  const decide = (name: string, description: string, build: (flags: Record<string, string | boolean | undefined>) => OperatorCommand, configure: (c: Command) => Command) =>
    configure(runs.command(name).description(description).requiredOption('--run <id>', 'run id'))
      .option('--json', 'print the run summary as JSON when it stops')
      .option('--agent <spec>', 'embedded default: the agent backend that continues the run')
      .option('--no-wait', 'record the decision and return without continuing the run')
      .option('--server <api-url>', 'a cluster\'s API (token from SF_API_TOKEN) instead of the log')
      .option('--idempotency-key <key>', 'make this decision at most once: the same key again changes nothing and reports the same outcome')
      .action(async (flags: Record<string, string | boolean | undefined>) => {
        const command = build(flags);
        const key = typeof flags.idempotencyKey === 'string' ? flags.idempotencyKey : undefined;
        if (typeof flags.server === 'string') return setExit(await decideOnServer(flags.server, String(flags.run), command, out, { json: Boolean(flags.json), wait: flags.wait !== false, ...(key ? { idempotencyKey: key } : {}) }));
        const agent = typeof flags.agent === 'string' ? parseAgentSpec(flags.agent) : undefined;
        const config = loadConfig();
        const session = flags.wait === false ? await logOnly() : await openSession(config, agent);
        try {
          await loadExisting(session.infra, String(flags.run));
          if (key) {
            // The API's key record: the same key from any surface (CLI, REST, MCP) decides once.
            const { RunOperations } = await import('@stageflow/api');
            await new RunOperations(session.infra).decide(String(flags.run), command, key);
          } else await session.infra.runs.execute(String(flags.run), (state) => decideOperator(command, state));
          if (flags.wait === false) {
            out.out(flags.json ? JSON.stringify({ run_id: flags.run, recorded: true }) : `recorded for run ${flags.run}`);
            setExit(0);
            return;
          }
          setExit(await runInForeground(session.infra, String(flags.run), out, { json: Boolean(flags.json), includeStages: false }));
        } finally {
          await session.close();
        }
      });

  decide(
    'recover',
    'decide a manual recovery: a guided fresh attempt, or stop the stage',
    (f) => {
      if (f.stop && f.guidance !== undefined) throw new UsageError('give --guidance or --stop, not both');
      if (f.stop) return { type: 'StopManualRecovery', stageId: String(f.stage), by: operator(), now: new Date().toISOString() };
      if (typeof f.guidance !== 'string') throw new UsageError('give --guidance "<instructions>" or --stop');
      return { type: 'RecoverWithGuidance', stageId: String(f.stage), guidance: f.guidance, by: operator(), now: new Date().toISOString() };
    },
    (c) => c.requiredOption('--stage <id>', 'stage id').option('--guidance <text>', 'instructions for the fresh attempt').option('--stop', 'end the stage for this run'),
  );

  decide(
    'answer',
    'answer a stage\'s operator question',
    (f) => ({ type: 'AnswerOperator', stageId: String(f.stage), answer: parseAnswer(f), by: operator(), now: new Date().toISOString() }),
    (c) =>
      c
        .requiredOption('--stage <id>', 'stage id')
        .option('--decision <accept|reject>', 'for confirm and artifact_backed questions')
        .option('--text <text>', 'free text (the answer, or a note with the decision)')
        .option('--answers <json>', 'multi_question: {"<id>": "text" | {"decision": "accept"}}')
        .option('--answer <json>', 'the whole answer as JSON: {"decision", "text", "answers"}'),
  );

  decide(
    'retry',
    'retry a stage that failed for a reason other than verification',
    (f) => ({ type: 'RetryStage', stageId: String(f.stage), by: operator(), now: new Date().toISOString() }),
    (c) => c.requiredOption('--stage <id>', 'stage id'),
  );

  decide(
    'feedback-decide',
    'decide a feedback loop parked at max_replays: extend (one more replay), continue, or abandon',
    (f) => {
      const decision = FEEDBACK_DECISIONS.find((d) => d === f.decision);
      if (!decision) throw new UsageError(`--decision must be one of ${FEEDBACK_DECISIONS.join(', ')}`);
      return { type: 'DecideFeedbackLoop', stageId: String(f.stage), decision, ...(typeof f.reason === 'string' ? { reason: f.reason } : {}), by: operator(), now: new Date().toISOString() };
    },
    (c) =>
      c
        .requiredOption('--stage <id>', 'the loop source stage')
        .requiredOption('--decision <extend|continue|abandon>', 'extend: one more replay; continue: go on downstream; abandon: fail the stage')
        .option('--reason <text>', 'why'),
  );

  decide(
    'cancel',
    'stop a run on every replica',
    (f) => ({ type: 'CancelRun', by: operator(), ...(typeof f.reason === 'string' ? { reason: f.reason } : {}), now: new Date().toISOString() }),
    (c) => c.option('--reason <text>', 'why'),
  );

  runs
    .command('resume')
    .description('continue an embedded run whose process died')
    .requiredOption('--run <id>', 'run id')
    .option('--agent <spec>', 'the agent backend that continues the run')
    .option('--json', 'print the run summary as JSON when it stops')
    .action(async (flags: { run: string; agent?: string; json?: boolean }) => {
      const session = await openSession(loadConfig(), flags.agent ? parseAgentSpec(flags.agent) : undefined);
      try {
        await loadExisting(session.infra, flags.run);
        setExit(await runInForeground(session.infra, flags.run, out, { json: Boolean(flags.json), includeStages: false }));
      } finally {
        await session.close();
      }
    });
}

async function logOnly(): Promise<{ infra: Infrastructure; close(): Promise<void> }> {
  const infra = await openLog();
  return { infra, close: () => infra.close() };
}

function parseJson(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag} is not JSON: ${(err as Error).message}`);
  }
}

function parseAnswer(flags: Record<string, string | boolean | undefined>): OperatorAnswer {
  if (typeof flags.answer === 'string') {
    const whole = parseJson('--answer', flags.answer);
    if (whole === null || typeof whole !== 'object' || Array.isArray(whole)) throw new UsageError('--answer must be a JSON object');
    return whole as OperatorAnswer;
  }
  const decision = flags.decision;
  if (decision !== undefined && decision !== 'accept' && decision !== 'reject') throw new UsageError('--decision must be accept or reject');
  return {
    ...(decision ? { decision } : {}),
    ...(typeof flags.text === 'string' ? { text: flags.text } : {}),
    ...(typeof flags.answers === 'string' ? { answers: parseJson('--answers', flags.answers) as OperatorAnswer['answers'] } : {}),
  };
}
