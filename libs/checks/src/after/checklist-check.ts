/**
 * `checklist`: the envelope's attestation for this check id must equal the declared items as a
 * set (after trimming). Recorded as an agent attestation, never as independent evidence.
 */
import type { ChecklistCheck } from '../domain';
import type { AfterCheckContext } from '../types';
import { outcome, type CheckOutcome } from './outcome';

export function runChecklistCheck(item: ChecklistCheck, ctx: AfterCheckContext): CheckOutcome {
  const entries = (ctx.envelope.checklist_attestations ?? []).filter((entry) => entry.check_id === item.id);
  const declared = new Set(item.items.map((text) => text.trim()));
  const attested = new Set(entries.flatMap((entry) => entry.items.map((text) => text.trim())));
  const missing = [...declared].filter((text) => !attested.has(text));
  const extra = [...attested].filter((text) => !declared.has(text));
  const problems: string[] = [];
  if (entries.length === 0) problems.push(`no attestation for checklist ${item.id}`);
  if (entries.length > 1) problems.push(`checklist ${item.id} attested ${entries.length} times`);
  if (missing.length > 0) problems.push(`missing item(s): ${missing.join(' | ')}`);
  if (extra.length > 0) problems.push(`extra item(s): ${extra.join(' | ')}`);
  return outcome(problems, { attestation: true, attested: entries.length > 0, declared: [...declared], missing, extra });
}
