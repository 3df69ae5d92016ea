import * as path from 'node:path';
import { at, type IssueSink, type Locator, type Site } from './issues';
import { isNonEmptyString, type PlainObject } from './guards';
import { REMOVED_KEYS, isRemovedKey } from './removedKeys';
import { BODY_KEYS, parseStageBody, type StageBodyDraft } from './stageBody';
import { WIRING_KEYS, validateStageFileDocument } from './stageFile';

/** A stage file found through `uses:`, or why it could not be had. */
export type StageFileLookup =
  | { readonly ok: true; readonly file: string; readonly value: unknown; readonly locate: Locator }
  | { readonly ok: false; readonly code: string; readonly message: string };

export interface EntryDraft {
  readonly index: number;
  readonly id: string;
  readonly site: Site;
  readonly uses?: string;
  /** Undefined when the body could not be read at all. */
  readonly body?: StageBodyDraft;
  readonly bodyFile: string;
  readonly raw: PlainObject;
}

/**
 * Normalises one pipeline stage entry: its keys (wiring + body, or wiring + `uses:`), its id
 * (explicit, or inferred from the `uses:` basename), and its body (inline or from the stage file).
 * Returns undefined only when no stage id can be determined.
 */
export function normalizeEntry(raw: PlainObject, index: number, site: Site, sink: IssueSink, loadStage: (uses: string) => StageFileLookup): EntryDraft | undefined {
  const uses = raw.uses;
  let id: string | undefined;
  if (raw.id !== undefined) {
    if (isNonEmptyString(raw.id)) id = raw.id;
    else sink.error('pipeline.invalid_shape', `stages[${index}]: id must be a non-empty string`, at(site, 'id'));
  } else if (isNonEmptyString(uses)) {
    id = inferIdFromUses(uses);
  } else {
    sink.error('pipeline.invalid_shape', `stages[${index}]: an inline stage entry needs an id`, site);
  }
  const label = `stage "${id ?? `#${index}`}"`;
  for (const key of Object.keys(raw)) {
    if (key === 'id' || (WIRING_KEYS as readonly string[]).includes(key) || (BODY_KEYS as readonly string[]).includes(key)) continue;
    if (isRemovedKey(key)) sink.error('pipeline.invalid_shape', `${label}: ${REMOVED_KEYS[key]}`, at(site, key), id);
    else sink.error('pipeline.invalid_shape', `${label}: unknown key "${key}" on a pipeline stage entry`, at(site, key), id);
  }
  if (id === undefined) return undefined;
  if (uses === undefined) {
    const hasBody = Object.keys(raw).some((key) => (BODY_KEYS as readonly string[]).includes(key));
    if (!hasBody) {
      sink.error('pipeline.stage_missing_body', `${label}: needs either uses: <stage file> or an inline body (system_prompt, io, ...)`, site, id);
      return { index, id, site, bodyFile: site.file, raw };
    }
    return { index, id, site, body: parseStageBody(raw, site, sink, id), bodyFile: site.file, raw };
  }
  if (!isNonEmptyString(uses)) {
    sink.error('pipeline.invalid_shape', `${label}: uses must be a path to a stage file`, at(site, 'uses'), id);
    return { index, id, site, bodyFile: site.file, raw };
  }
  const inline = Object.keys(raw).filter((key) => (BODY_KEYS as readonly string[]).includes(key));
  for (const key of inline) {
    const why = key === 'verify' ? 'verify belongs on the stage body (the uses: file), not beside uses:' : `body key "${key}" cannot sit beside uses: (put it in the stage file)`;
    sink.error('pipeline.stage_uses_inline_conflict', `${label}: ${why}`, at(site, key), id);
  }
  const lookup = loadStage(uses);
  if (!lookup.ok) {
    sink.error(lookup.code, `${label}: ${lookup.message}`, at(site, 'uses'), id);
    return { index, id, site, uses, bodyFile: site.file, raw };
  }
  const fileSite: Site = { file: lookup.file, locate: lookup.locate, path: [] };
  const draft = validateStageFileDocument(lookup.value, fileSite, sink, false);
  if (draft?.id !== undefined && draft.id !== id) {
    sink.error('pipeline.stage_id_mismatch', `${label}: the stage file ${uses} declares id "${draft.id}"`, at(site, 'uses'), id);
  }
  return { index, id, site, uses, ...(draft !== undefined ? { body: draft.body } : {}), bodyFile: lookup.file, raw };
}

/** `./stages/plan.yaml` and `./plan.stage.yaml` both name stage `plan`. */
export function inferIdFromUses(uses: string): string {
  return path.basename(uses).replace(/\.stage\.ya?ml$|\.ya?ml$/, '');
}
