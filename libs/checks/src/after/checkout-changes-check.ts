/**
 * `checkout_changes`: the attempt must have changed the checkout (baseline vs after manifest:
 * tracked and untracked non-ignored files). With `path_fields`, the union of the paths claimed in
 * those payload string-array fields (normalised, never absolute or with `..`) must EQUAL the
 * changed paths.
 */
import type { CheckoutChangesCheck } from '../domain';
import { CheckCannotRunError } from '../errors';
import { parseRelativePath } from '../paths';
import { changedPaths, comparePaths, diffManifests } from '../snapshot/manifest';
import type { AfterCheckContext } from '../types';
import { outcome, type CheckOutcome } from './outcome';

interface Claims {
  readonly claimed: string[];
  readonly invalid: string[];
  readonly problems: string[];
}

function readClaims(fields: readonly string[], payload: unknown): Claims {
  const claimed = new Set<string>();
  const invalid: string[] = [];
  const problems: string[] = [];
  const record = typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? (payload as Record<string, unknown>) : undefined;
  for (const field of fields) {
    const value = record?.[field];
    if (!Array.isArray(value) || !value.every((entry): entry is string => typeof entry === 'string')) {
      problems.push(`payload field ${field} is not an array of strings`);
      continue;
    }
    for (const raw of value) {
      const parsed = parseRelativePath(raw);
      if (parsed.ok) claimed.add(parsed.normalized);
      else invalid.push(raw);
    }
  }
  if (invalid.length > 0) problems.push(`invalid claimed path(s): ${invalid.map((p) => JSON.stringify(p)).join(', ')}`);
  return { claimed: [...claimed].sort(comparePaths), invalid, problems };
}

export function runCheckoutChangesCheck(item: CheckoutChangesCheck, ctx: AfterCheckContext): CheckOutcome {
  if (ctx.baselineManifest === undefined || ctx.afterManifest === undefined) {
    throw new CheckCannotRunError('baseline or after snapshot of the checkout is unavailable');
  }
  const diff = diffManifests(ctx.baselineManifest, ctx.afterManifest);
  const changed = changedPaths(diff);
  const problems: string[] = changed.length === 0 ? ['the attempt changed nothing in the checkout'] : [];
  const base = { changed, added: diff.added, modified: diff.modified, deleted: diff.deleted };
  if (item.path_fields === undefined || item.path_fields.length === 0) return outcome(problems, base);

  const claims = readClaims(item.path_fields, ctx.envelope.payload);
  const claimedSet = new Set(claims.claimed);
  const changedSet = new Set(changed);
  const missingClaimed = claims.claimed.filter((path) => !changedSet.has(path));
  const unclaimed = changed.filter((path) => !claimedSet.has(path));
  problems.push(...claims.problems);
  if (missingClaimed.length > 0) problems.push(`claimed but not changed: ${missingClaimed.join(', ')}`);
  if (unclaimed.length > 0) problems.push(`changed but not claimed: ${unclaimed.join(', ')}`);
  return outcome(problems, {
    ...base,
    path_fields: item.path_fields,
    claimed: claims.claimed,
    invalid_claimed: claims.invalid,
    missing_claimed: missingClaimed,
    unclaimed,
  });
}
