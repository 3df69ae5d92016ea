import type { OnVerifyFail, VerifyItem } from '@stageflow/domain';
import { at, type IssueSink, type Site } from './issues';
import { isPlainObject, isPositiveInteger } from './guards';

const INVALID = 'pipeline.invalid_recovery';
const KEYS = ['mode', 'max_attempts', 'retry_safety', 'include_failed_checks'];
/** Attempts allowed in manual mode when the entry does not say. */
export const DEFAULT_MANUAL_MAX_ATTEMPTS = 3;

/**
 * Parses a pipeline entry's `on_verify_fail` against the resolved stage's verify list. Refused:
 * unknown keys, a mode other than repair|manual, max_attempts < 1, retry_safety other than
 * idempotent|side_effecting, automatic repair of side-effecting work, and a policy on a stage
 * with no after-phase check (nothing could fail verification).
 */
export function parseOnVerifyFail(raw: unknown, verify: readonly VerifyItem[] | undefined, site: Site, sink: IssueSink, stageId: string): OnVerifyFail | undefined {
  const prefix = `stage "${stageId}": on_verify_fail`;
  if (!isPlainObject(raw)) {
    sink.error(INVALID, `${prefix} must be a mapping { mode, max_attempts, retry_safety, include_failed_checks }`, site, stageId);
    return undefined;
  }
  const before = sink.errorCount;
  for (const key of Object.keys(raw)) {
    if (!KEYS.includes(key)) sink.error(INVALID, `${prefix}: unknown key "${key}"`, at(site, key), stageId);
  }
  if (raw.mode !== 'repair' && raw.mode !== 'manual') sink.error(INVALID, `${prefix}: mode must be "repair" or "manual"`, at(site, 'mode'), stageId);
  if (raw.retry_safety !== 'idempotent' && raw.retry_safety !== 'side_effecting') {
    sink.error(INVALID, `${prefix}: retry_safety must be "idempotent" or "side_effecting"`, at(site, 'retry_safety'), stageId);
  }
  if (raw.mode === 'repair' ? !isPositiveInteger(raw.max_attempts) : raw.max_attempts !== undefined && !isPositiveInteger(raw.max_attempts)) {
    sink.error(INVALID, `${prefix}: max_attempts must be an integer >= 1`, at(site, 'max_attempts'), stageId);
  }
  if (raw.include_failed_checks !== undefined && typeof raw.include_failed_checks !== 'boolean') {
    sink.error(INVALID, `${prefix}: include_failed_checks must be a boolean`, at(site, 'include_failed_checks'), stageId);
  }
  if (raw.mode === 'repair' && raw.retry_safety === 'side_effecting') {
    sink.error(INVALID, `${prefix}: mode repair is refused for retry_safety side_effecting work; use mode: manual`, at(site, 'mode'), stageId);
  }
  if (verify !== undefined && !verify.some((item) => item.when.includes('after'))) {
    sink.error(INVALID, `${prefix} requires a completion contract: at least one after-phase verify item on the stage`, site, stageId);
  }
  if (sink.errorCount !== before) return undefined;
  return {
    mode: raw.mode as OnVerifyFail['mode'],
    max_attempts: (raw.max_attempts as number | undefined) ?? DEFAULT_MANUAL_MAX_ATTEMPTS,
    retry_safety: raw.retry_safety as OnVerifyFail['retry_safety'],
    include_failed_checks: (raw.include_failed_checks as boolean | undefined) ?? true,
  };
}
