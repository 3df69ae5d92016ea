/**
 * Following a run on a cluster over HTTP, with the same progress lines, final board or JSON
 * summary, and exit codes as the embedded default (`runInForeground`).
 *
 * Guarantees: the state is folded from every event of the run (long-polled pages, each event
 * once, in log order), so the summary is the one the cluster computes; the follow ends when the run
 * stops or waits on an operator. Interrupting it stops only the follower, never the run.
 */
import { evolve, initialRunState, runStatus, summarizeRun, type RunEvent, type RunState } from '@stageflow/domain';
import { exitCodeFor } from '../exit-codes';
import type { Output } from '../output';
import { board, progressLine } from '../progress';
import type { ApiClient } from './client';

const WAIT_MS = 20_000;

export interface RemoteRun {
  state: RunState;
  lastSeq: number;
}

/** The run as it is now, every event folded, nothing printed. */
export async function loadRemote(client: ApiClient, runId: string): Promise<RemoteRun> {
  const run: RemoteRun = { state: initialRunState(), lastSeq: 0 };
  await catchUp(client, runId, run, () => undefined, 0);
  return run;
}

async function catchUp(client: ApiClient, runId: string, run: RemoteRun, onEvent: (event: RunEvent) => void, waitMs: number): Promise<void> {
  for (;;) {
    const page = await client.events(runId, run.lastSeq, waitMs);
    for (const event of page.events) {
      run.state = evolve(run.state, event);
      onEvent(event);
    }
    const advanced = page.last_seq > run.lastSeq;
    run.lastSeq = page.last_seq;
    if (!advanced || waitMs > 0) return;
  }
}

export async function followRemote(client: ApiClient, runId: string, out: Output, options: { json: boolean; includeStages: boolean; from?: RemoteRun }): Promise<number> {
  const run: RemoteRun = options.from ?? { state: initialRunState(), lastSeq: 0 };
  const onEvent = (event: RunEvent) => {
    if (options.json) return;
    const line = progressLine(event);
    if (line) out.out(line);
  };
  for (;;) {
    await catchUp(client, runId, run, onEvent, run.lastSeq === 0 ? 0 : WAIT_MS);
    if (run.state.exists && runStatus(run.state) !== 'running') break;
  }
  const summary = summarizeRun(run.state, { includeEnvelopes: options.includeStages });
  out.out(options.json ? JSON.stringify(summary, null, 2) : `\n${board(summary)}`);
  return exitCodeFor(runStatus(run.state));
}
