/**
 * The rows a run fold projects to, one list per table. A pure function of the fold: the same
 * fold always yields the same rows, which is what makes every write an idempotent upsert.
 * Nothing is projected for a run whose RunRequested has not been folded.
 */
import { pendingManualRecovery, runStatus, type StageState } from '@stageflow/domain';
import { decisionKey, type RunFold } from './fold';
import type { Row, RunTableName } from './tables';

export type RunRows = { readonly [T in RunTableName]: readonly Row[] };

export function deriveRows(fold: RunFold): RunRows {
  const { run } = fold;
  const rows: { [T in RunTableName]: Row[] } = {
    runs: [],
    stages: [],
    attempts: [],
    checks: [],
    operator_interactions: [],
    recovery_decisions: [],
    envelopes: [],
  };
  if (!run.exists) return rows;
  const run_id = run.runId;
  rows.runs.push({
    run_id,
    pipeline: run.pipeline.id,
    status: runStatus(run),
    reason: run.outcomeReason ?? null,
    labels: run.labels,
    idempotency_key: run.idempotencyKey ?? null,
    stage_order: run.pipeline.stages.map((s) => s.id),
    started_at: run.requestedAt,
    finished_at: run.finishedAt ?? null,
    updated_seq: fold.updatedSeq,
  });
  for (const stage of Object.values(run.stages)) {
    const stage_id = stage.id;
    rows.stages.push({
      run_id,
      stage_id,
      status: stage.status,
      skip_reason: stage.skipReason ?? null,
      skip_detail: stage.skipDetail ?? null,
      failure_kind: stage.failureKind ?? null,
      failure: stage.failure ?? null,
      attempt_count: stage.attempts.length,
      pending_recovery_attempt: pendingManualRecovery(stage)?.attempt ?? null,
      started_at: stage.startedAt ?? null,
      finished_at: stage.finishedAt ?? null,
    });
    stage.attempts.forEach((a, ordinal) => {
      rows.attempts.push({
        run_id,
        stage_id,
        n: a.n,
        ordinal,
        reason: a.reason,
        phase: a.phase,
        disposition: a.disposition,
        failure: a.failure,
        failure_kind: a.failureKind ?? null,
        guidance: a.guidance ?? null,
        rejections: a.rejections.length,
        reminders: a.reminders,
        started_at: a.startedAt,
        finished_at: a.finishedAt ?? null,
        deadline_at: a.deadlineAt,
      });
      a.checks.forEach((c, checkOrdinal) => {
        rows.checks.push({
          run_id,
          stage_id,
          attempt: a.n,
          ordinal: checkOrdinal,
          check_id: c.id,
          type: c.type,
          phase: c.phase,
          status: c.status,
          message: c.message ?? null,
          evidence: c.evidence ?? {},
          started_at: c.started_at,
          finished_at: c.finished_at,
        });
      });
    });
    for (const x of stage.exchanges) {
      rows.operator_interactions.push({
        run_id,
        stage_id,
        exchange_id: x.exchangeId,
        attempt: x.attempt,
        kind: x.question.kind,
        question: x.question.question,
        question_detail: x.question,
        answer: x.answer ?? null,
        decision: x.answer?.decision ?? null,
        asked_at: x.askedAt,
        answered_at: x.answeredAt ?? null,
        answered_by: x.answeredBy ?? null,
      });
    }
    for (const m of stage.manualRecoveries) {
      rows.recovery_decisions.push({
        run_id,
        stage_id,
        attempt: m.attempt,
        opened_at: m.openedAt,
        decision: m.decision ?? null,
        guidance: m.guidance ?? null,
        decided_by: m.decidedBy ?? null,
        decided_at: fold.decidedAt[decisionKey(stage_id, m.attempt)] ?? null,
      });
    }
    rows.envelopes.push(...envelopeRows(run_id, stage, fold.accepted[stage_id]));
  }
  return rows;
}

/** Every envelope an attempt left; the one the stage succeeded with is marked accepted. */
function envelopeRows(run_id: string, stage: StageState, acceptedAttempt: number | undefined): Row[] {
  const rows: Row[] = [];
  const accepted = stage.envelope !== undefined ? acceptedAttempt : undefined;
  for (const a of stage.attempts) {
    if (a.n === accepted) continue;
    if (a.envelope) rows.push({ run_id, stage_id: stage.id, attempt: a.n, envelope: a.envelope, accepted: false });
  }
  if (accepted !== undefined && stage.envelope) {
    rows.push({ run_id, stage_id: stage.id, attempt: accepted, envelope: stage.envelope, accepted: true });
  }
  return rows;
}
