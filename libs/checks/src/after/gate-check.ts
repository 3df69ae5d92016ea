/**
 * `gate` (after phase): satisfied by ANY exchange of the gate's kind for this stage over the run
 * so far (every attempt). confirm / artifact_backed need an `accept` decision; free_text /
 * multi_question need an answer. A rejected exchange never satisfies it.
 */
import type { GateCheck, GateKind } from '../domain';
import type { AfterCheckContext, OperatorExchange } from '../types';
import type { CheckOutcome } from './outcome';

export function satisfiesGate(kind: GateKind, exchange: OperatorExchange): boolean {
  if (exchange.kind !== kind || exchange.decision === 'reject') return false;
  switch (kind) {
    case 'confirm':
    case 'artifact_backed':
      return exchange.decision === 'accept';
    case 'free_text':
    case 'multi_question':
      return exchange.answered;
    default: {
      const unreachable: never = kind;
      throw new Error(`unknown gate kind ${String(unreachable)}`);
    }
  }
}

export function runGateCheck(item: GateCheck, ctx: AfterCheckContext): CheckOutcome {
  const ofKind = ctx.operatorExchanges.filter((exchange) => exchange.kind === item.kind);
  const satisfying = ofKind.filter((exchange) => satisfiesGate(item.kind, exchange));
  const evidence = {
    kind: item.kind,
    scope: 'run',
    exchanges: ofKind.map((e) => ({ attempt: e.attempt, answered: e.answered, ...(e.decision === undefined ? {} : { decision: e.decision }) })),
    satisfied_by_attempts: [...new Set(satisfying.map((e) => e.attempt))].sort((a, b) => a - b),
  };
  if (satisfying.length > 0) return { status: 'passed', evidence };
  const wanted = item.kind === 'confirm' || item.kind === 'artifact_backed' ? 'accepted' : 'answered';
  const message = ofKind.length === 0 ? `no ${item.kind} exchange in this run` : `no ${item.kind} exchange in this run was ${wanted}`;
  return { status: 'failed', message, evidence };
}
