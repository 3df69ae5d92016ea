import { decideRunError, subjects } from '@stageflow/domain';
import type { Infrastructure } from './infrastructure';
import { runIdOf } from './subjects';

/** A subscription message its subscriber gave up on (see the transport's DeadEvent). */
export interface GivenUpMessage {
  readonly durable: string;
  readonly seq: number;
  readonly subject: string;
  readonly reason: string;
}

/**
 * Ends the run a dead-lettered message was about in `error`, with the subscriber, the message
 * and the reason. A message on no run subject is only recorded; a run already finished keeps
 * its outcome.
 */
export async function endRunOfDeadMessage(infra: Pick<Infrastructure, 'config' | 'runs'>, letter: GivenUpMessage, now = new Date()): Promise<void> {
  const runSubjects = subjects(infra.config.namespace).allRuns.slice(0, -1);
  if (!letter.subject.startsWith(runSubjects)) return;
  const runId = runIdOf(letter.subject);
  const reason = `${letter.durable} could not process ${letter.subject} seq ${letter.seq}: ${letter.reason}`;
  await infra.runs.execute(runId, (state) => decideRunError({ type: 'EndRunInError', reason, now: now.toISOString() }, state));
}
