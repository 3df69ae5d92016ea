/**
 * Runs every verify item whose `when` includes `after`, in declaration order, ALL of them even
 * after a failure, one at a time (commands never run concurrently). Every item yields exactly one
 * CheckResult; a check that cannot run, or throws, yields `error` with the reason.
 */
import type { CheckResult, VerifyItem } from '../domain';
import { CheckCannotRunError, errorMessage } from '../errors';
import type { AfterCheckContext } from '../types';
import { runArtifactCheck } from './artifact-check';
import { runCheckoutChangesCheck } from './checkout-changes-check';
import { runChecklistCheck } from './checklist-check';
import { runCommandCheck } from './command-check';
import { runGateCheck } from './gate-check';
import type { CheckOutcome } from './outcome';
import { runPayloadSchemaCheck } from './payload-schema-check';

async function runOne(item: VerifyItem, ctx: AfterCheckContext): Promise<CheckOutcome> {
  switch (item.type) {
    case 'command':
      return runCommandCheck(item, ctx);
    case 'artifact':
      return runArtifactCheck(item, ctx);
    case 'checklist':
      return runChecklistCheck(item, ctx);
    case 'payload_schema':
      return runPayloadSchemaCheck(item, ctx);
    case 'gate':
      return runGateCheck(item, ctx);
    case 'checkout_changes':
      return runCheckoutChangesCheck(item, ctx);
    default: {
      const unreachable: never = item;
      throw new CheckCannotRunError(`unknown check type ${JSON.stringify((unreachable as { type?: unknown }).type)}`);
    }
  }
}

export function afterPhaseItems(items: readonly VerifyItem[]): VerifyItem[] {
  return items.filter((item) => item.when.includes('after'));
}

export async function runAfterChecks(items: readonly VerifyItem[], ctx: AfterCheckContext): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const item of afterPhaseItems(items)) {
    const startedAt = new Date().toISOString();
    let result: CheckOutcome;
    try {
      result = await runOne(item, ctx);
    } catch (error) {
      const reason = error instanceof CheckCannotRunError ? error.message : `check crashed: ${errorMessage(error)}`;
      result = { status: 'error', message: reason, evidence: {} };
    }
    results.push({ id: item.id, type: item.type, phase: 'after', ...result, started_at: startedAt, finished_at: new Date().toISOString() });
  }
  return results;
}
