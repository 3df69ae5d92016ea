import { at, type IssueSink, type Site } from './issues';
import { isNonEmptyString, isPlainObject } from './guards';
import { REMOVED_KEYS, isRemovedKey } from './removedKeys';
import { BODY_KEYS, parseStageBody, type StageBodyDraft } from './stageBody';

/** Keys that wire a stage into one pipeline; they belong on the pipeline entry only. */
export const WIRING_KEYS = ['uses', 'entry', 'route', 'on_verify_fail', 'replay_safe', 'clone_cap', 'clone_mode'] as const;

export interface StageFileDraft {
  readonly id?: string;
  readonly body: StageBodyDraft;
}

/**
 * Validates a reusable stage file's document: a mapping of `id` plus body keys. Wiring keys,
 * removed keys and unknown keys are refused (stage.invalid_shape). `requireId` is set when the
 * file is loaded on its own; through `uses:` the entry may supply the id.
 */
export function validateStageFileDocument(value: unknown, site: Site, sink: IssueSink, requireId: boolean): StageFileDraft | undefined {
  if (!isPlainObject(value)) {
    sink.error('stage.invalid_shape', 'a stage file must be a mapping with id, system_prompt and io', site);
    return undefined;
  }
  let id: string | undefined;
  if (value.id !== undefined || requireId) {
    if (isNonEmptyString(value.id)) id = value.id;
    else sink.error('stage.invalid_shape', 'stage id must be a non-empty string', at(site, 'id'));
  }
  const label = id === undefined ? '' : `stage "${id}": `;
  for (const key of Object.keys(value)) {
    if (key === 'id' || (BODY_KEYS as readonly string[]).includes(key)) continue;
    if (isRemovedKey(key)) {
      sink.error('stage.invalid_shape', `${label}${REMOVED_KEYS[key]}`, at(site, key), id);
    } else if ((WIRING_KEYS as readonly string[]).includes(key)) {
      sink.error('stage.invalid_shape', `${label}wiring key "${key}" belongs on the pipeline stage entry, not in a reusable stage file`, at(site, key), id);
    } else {
      sink.error('stage.invalid_shape', `${label}unknown key "${key}" in a stage file`, at(site, key), id);
    }
  }
  return { ...(id !== undefined ? { id } : {}), body: parseStageBody(value, site, sink, id) };
}
