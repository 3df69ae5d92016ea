/** Live progress lines for a terminal, and the board of stages printed when a run stops. */
import type { RunEvent, RunSummary } from '@stageflow/domain';

const MARK = { ok: '✔', fail: '✖', info: '•', wait: '⏸', skip: '↷' } as const;

/** The recorded operator, with what the caller claimed (unverified) beside it. */
const who = (event: { readonly by: string; readonly claimedBy?: string }) => `${event.by}${event.claimedBy ? ` (as ${event.claimedBy})` : ''}`;

export function progressLine(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'RunRequested':
      return `${MARK.info} run ${event.runId} (${event.pipeline.id}) requested`;
    case 'StageAttemptStarted':
      return `${MARK.info} ${event.stageId} attempt ${event.attempt} started${event.reason === 'initial' ? '' : ` (${event.reason.replace('_', ' ')})`}`;
    case 'CheckoutBaselineRecorded':
      return undefined;
    case 'OperatorQuestionAsked':
      return `${MARK.wait} ${event.stageId} asks the operator (${event.question.kind}): ${event.question.question}`;
    case 'OperatorAnswered':
      return `${MARK.info} ${event.stageId} answered by ${who(event)}${event.answer.decision ? `: ${event.answer.decision}` : ''}`;
    case 'EnvelopeRejected':
      return `  ${event.stageId} emit rejected: ${event.reason}`;
    case 'ReminderSent':
      return `  ${event.stageId} reminder ${event.reminder} sent`;
    case 'AgentTurnRecorded':
      return undefined;
    case 'EnvelopeCaptured':
      return `${MARK.info} ${event.stageId} attempt ${event.attempt} claims ${event.envelope.status}: ${event.envelope.summary}`;
    case 'AttemptFailed':
      return `${MARK.fail} ${event.stageId} attempt ${event.attempt} failed: ${event.reason}`;
    case 'AttemptVerified': {
      const lines = event.checks.map((c) => `    ${c.status === 'passed' ? MARK.ok : MARK.fail} check ${c.id} (${c.type}) ${c.status}${c.message ? `: ${c.message}` : ''}`);
      return [`${event.disposition === 'passed' ? MARK.ok : MARK.fail} ${event.stageId} attempt ${event.attempt} verification ${event.disposition}`, ...lines].join('\n');
    }
    case 'StageSucceeded':
      return `${MARK.ok} ${event.stageId} succeeded`;
    case 'StageFailed':
      return `${MARK.fail} ${event.stageId} failed: ${event.reason}`;
    case 'ManualRecoveryOpened':
      return `${MARK.wait} ${event.stageId} waits for a recovery decision (sf runs recover --run ${event.runId} --stage ${event.stageId} --guidance "…" | --stop)`;
    case 'ManualRecoveryDecided':
      return `${MARK.info} ${event.stageId} recovery decided by ${who(event)}: ${event.decision}`;
    case 'StageRetryRequested':
      return `${MARK.info} ${event.stageId} retry requested by ${who(event)}`;
    case 'StageSkipped':
      return `${MARK.skip} ${event.stageId} skipped (${event.reason}${event.detail ? `: ${event.detail}` : ''})`;
    case 'RunSucceeded':
      return `${MARK.ok} run succeeded`;
    case 'RunFailed':
      return `${MARK.fail} run failed: ${event.reason}`;
    case 'RunCancelled':
      return `${MARK.fail} run stopped by ${who(event)}`;
    case 'RunErrored':
      return `${MARK.fail} run ended in error: ${event.reason}`;
    case 'SignatureRefused':
      return `${MARK.fail} ${event.refusedType}${event.stageId ? ` of ${event.stageId}` : ''}${event.attempt !== undefined ? ` attempt ${event.attempt}` : ''} refused, not applied: ${event.reason}`;
    default:
      return undefined;
  }
}

export function board(summary: RunSummary): string {
  const rows = summary.stages.map((s) => {
    const last = s.attempts[s.attempts.length - 1];
    const note = s.skip_reason ? `skipped: ${s.skip_reason}` : s.waiting_for ? `waiting for ${s.waiting_for.replace('_', ' ')}` : (s.failure ?? last?.failure ?? '');
    return [s.id, s.status, String(s.attempts.length), last?.disposition ?? '-', note];
  });
  const header = ['STAGE', 'STATUS', 'ATTEMPTS', 'DISPOSITION', 'NOTE'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd();
  const security = (summary.security ?? []).map(
    (n) => `security: ${n.refused}${n.stage ? ` of ${n.stage}${n.attempt !== undefined ? ` attempt ${n.attempt}` : ''}` : ''} refused (${n.reason}); not applied`,
  );
  return [`run ${summary.run_id} (${summary.pipeline}): ${summary.status}${summary.reason ? ` — ${summary.reason}` : ''}`, fmt(header), ...rows.map(fmt), ...security].join('\n');
}
