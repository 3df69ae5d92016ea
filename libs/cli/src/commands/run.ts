import type { Command } from 'commander';
import { decideRequest, type Checkout } from '@stageflow/domain';
import { parseAgentSpec } from '@stageflow/runtime';
import { loadConfig } from '@stageflow/runtime';
import { newRunId } from '../ids';
import type { Output } from '../output';
import { UsageError } from '../output';
import { loadValidPipeline, parseLabels, resolveCheckout, resolveInput } from '../run-request';
import { openSession, runInForeground } from '../session';
import { runOnServer } from '../remote/run';
import { requestRunOverBus } from '../bus-run';

interface RunFlags {
  pipeline: string;
  agent?: string;
  input?: string;
  task?: string;
  checkout?: string;
  json?: boolean;
  include?: string;
  label: string[];
  detach?: boolean;
  server?: string;
  git?: string;
  ref?: string;
}

export function registerRun(program: Command, out: Output, setExit: (code: number) => void): void {
  program
    .command('run')
    .description('run a pipeline and wait until it succeeds, fails, or waits on an operator')
    .requiredOption('-p, --pipeline <file>', 'the *.pipeline.yaml to run')
    .option('-a, --agent <spec>', 'agent backend: script:<file> | openai | anthropic | exec:<command>')
    .option('--input <json>', 'task input as a JSON object')
    .option('--task <file>', 'a *.task.yaml with the task input')
    .option('--checkout <dir>', 'root of the git working tree the run works in (default: a fresh repository)')
    .option('--json', 'print only the run summary as JSON')
    .option('--include <what>', 'with --json: "stages" adds each stage\'s accepted envelope')
    .option('--label <key=value>', 'label the run (repeatable)', (v: string, acc: string[]) => [...acc, v], [])
    .option('--detach', 'print the run id and return at once')
    .option('--server <api-url>', 'run on a cluster through its API (token from SF_API_TOKEN): the pipeline is sent inline')
    .option('--git <url>', 'the run works in a clone of this repository (cloned by the agent-runner)')
    .option('--ref <ref>', 'with --git: the branch, tag or commit to check out')
    .action(async (flags: RunFlags) => {
      if (flags.include !== undefined && flags.include !== 'stages') throw new UsageError(`--include ${flags.include}: only "stages" is known`);
      const pipeline = loadValidPipeline(flags.pipeline);
      const input = resolveInput(pipeline, flags);
      if (flags.git !== undefined && flags.checkout !== undefined) throw new UsageError('give --git or --checkout, not both');
      if (flags.ref !== undefined && flags.git === undefined) throw new UsageError('--ref needs --git <url>');
      const checkout: Checkout = flags.git !== undefined ? { kind: 'git', url: flags.git, ref: flags.ref ?? 'HEAD' } : resolveCheckout(flags.checkout);
      const labels = parseLabels(flags.label);
      if (flags.server !== undefined) {
        setExit(await runOnServer({ server: flags.server, pipeline: flags.pipeline, input: flags.input, task: flags.task, checkout, labels, json: Boolean(flags.json), includeStages: flags.include === 'stages', detach: Boolean(flags.detach) }, out));
        return;
      }
      const config = loadConfig();
      if (config.mode === 'cluster' && checkout.kind === 'path') {
        throw new UsageError('--checkout <dir> works only in the embedded default: a cluster cannot see this machine\'s files');
      }
      const agentText = flags.agent ?? process.env.SF_AGENT;
      if (config.mode === 'embedded' && !agentText) {
        throw new UsageError('no agent backend: pass --agent (script:<file> | openai | anthropic | exec:<command>) or set SF_AGENT');
      }
      const agent = agentText !== undefined ? parseAgentSpec(agentText) : undefined;
      if (config.mode === 'embedded') await warnIfUnsandboxed(out);
      if (config.mode === 'cluster' && flags.agent !== undefined) out.err('sf: --agent is ignored against a cluster: agent-runners use their own configured backend');
      const session = await openSession(config, agent);
      try {
        // A cluster's API starts the run when one serves run requests; otherwise (a deployment
        // without an API, operator credentials) the request is appended to the log directly.
        const requested = config.mode === 'cluster' ? await requestRunOverBus(session.infra, { pipeline: flags.pipeline, input, checkout, labels }) : undefined;
        const runId = requested ?? newRunId();
        if (requested === undefined) {
          await session.infra.runs.execute(runId, (state) =>
            decideRequest({ type: 'RequestRun', runId, pipeline, input, checkout, labels, requestedBy: `cli:${process.env.USER ?? 'unknown'}`, now: new Date().toISOString() }, state),
          );
        }
        if (flags.detach) {
          out.out(flags.json ? JSON.stringify({ run_id: runId }) : runId);
          setExit(0);
          return;
        }
        setExit(await runInForeground(session.infra, runId, out, { json: Boolean(flags.json), includeStages: flags.include === 'stages' }, true));
      } finally {
        await session.close();
      }
    });
}

/** The embedded default runs agent code here: without a sandbox it still runs, and says so once. */
async function warnIfUnsandboxed(out: Output): Promise<void> {
  const { defaultSandbox, embeddedStartup } = await import('@stageflow/sandbox');
  const decision = embeddedStartup(await defaultSandbox().probe());
  if (decision.kind === 'unsandboxed') out.err(`sf: warning: ${decision.reason}`);
}
