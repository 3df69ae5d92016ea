import { GATE_KINDS, type CheckPhase, type GateKind, type VerifyItem } from '@stageflow/domain';
import { at, type IssueSink, type Site } from './issues';
import { hasOwn, isNonEmptyString, isPlainObject, isStringArray, type PlainObject } from './guards';
import { timeoutProblem } from './timeouts';

const INVALID = 'pipeline.invalid_verify';

type CheckTypeName = VerifyItem['type'];

/** Keys each check type accepts beyond `id`, `type`, `when`; anything else is refused. */
const TYPE_KEYS: Readonly<Record<CheckTypeName, readonly string[]>> = {
  command: ['run', 'cwd', 'timeout_ms', 'network'],
  artifact: ['path', 'basename', 'nonempty', 'sections', 'runner_evidence'],
  checklist: ['items'],
  payload_schema: [],
  gate: ['kind'],
  checkout_changes: ['path_fields'],
};

/** Phases a check type may run in, and its default when `when` is omitted (undefined: must say). */
const PHASES: Readonly<Record<CheckTypeName, { legal: readonly CheckPhase[]; default?: readonly CheckPhase[] }>> = {
  command: { legal: ['after'], default: ['after'] },
  artifact: { legal: ['emit', 'after'] },
  checklist: { legal: ['after'], default: ['after'] },
  payload_schema: { legal: ['after'], default: ['after'] },
  gate: { legal: ['emit', 'after'], default: ['emit'] },
  checkout_changes: { legal: ['after'], default: ['after'] },
};

function isCheckType(value: unknown): value is CheckTypeName {
  return typeof value === 'string' && hasOwn(TYPE_KEYS, value);
}

/**
 * Parses a stage body's `verify` list. Every problem is reported (code pipeline.invalid_verify);
 * only fully valid items are returned, with `when` made explicit.
 */
export function parseVerify(raw: unknown, site: Site, sink: IssueSink, stageId: string | undefined): VerifyItem[] {
  if (raw === undefined || raw === null) return [];
  const label = stageLabel(stageId);
  if (!Array.isArray(raw)) {
    sink.error(INVALID, `${label}verify must be a list of checks`, site, stageId);
    return [];
  }
  const items: VerifyItem[] = [];
  const seen = new Set<string>();
  raw.forEach((entry, index) => {
    const itemSite = at(site, index);
    const before = sink.errorCount;
    const item = parseItem(entry, itemSite, sink, stageId);
    if (item !== undefined && seen.has(item.id)) {
      sink.error(INVALID, `${label}verify id "${item.id}" is used twice; check ids must be unique within a stage`, at(itemSite, 'id'), stageId);
    } else if (item !== undefined && sink.errorCount === before) {
      items.push(item);
    }
    if (item !== undefined) seen.add(item.id);
  });
  return items;
}

function parseItem(entry: unknown, site: Site, sink: IssueSink, stageId: string | undefined): VerifyItem | undefined {
  const label = stageLabel(stageId);
  if (!isPlainObject(entry)) {
    sink.error(INVALID, `${label}each verify item must be a mapping with id and type`, site, stageId);
    return undefined;
  }
  if (!isNonEmptyString(entry.id)) {
    sink.error(INVALID, `${label}verify item needs a non-empty string id`, at(site, 'id'), stageId);
    return undefined;
  }
  const what = `${label}verify "${entry.id}"`;
  if (!isCheckType(entry.type)) {
    sink.error(INVALID, `${what}: unknown check type ${JSON.stringify(entry.type)} (expected one of ${Object.keys(TYPE_KEYS).join(', ')})`, at(site, 'type'), stageId);
    return undefined;
  }
  const type = entry.type;
  const allowed = new Set(['id', 'type', 'when', ...TYPE_KEYS[type]]);
  for (const key of Object.keys(entry)) {
    if (!allowed.has(key)) sink.error(INVALID, `${what}: unknown key "${key}" on a ${type} check`, at(site, key), stageId);
  }
  const when = parseWhen(entry, type, what, site, sink, stageId);
  if (when === undefined) return undefined;
  return parseTypedFields(entry, type, entry.id, when, what, site, sink, stageId);
}

function parseWhen(entry: PlainObject, type: CheckTypeName, what: string, site: Site, sink: IssueSink, stageId: string | undefined): readonly CheckPhase[] | undefined {
  const phases = PHASES[type];
  if (entry.when === undefined) {
    if (phases.default === undefined) sink.error(INVALID, `${what}: type ${type} requires when ([emit], [after] or both)`, site, stageId);
    return phases.default;
  }
  const when = entry.when;
  if (!Array.isArray(when) || when.length === 0 || !when.every((p) => p === 'emit' || p === 'after') || new Set(when).size !== when.length) {
    sink.error(INVALID, `${what}: when must be a non-empty list of unique phases emit, after`, at(site, 'when'), stageId);
    return undefined;
  }
  const illegal = (when as CheckPhase[]).find((phase) => !phases.legal.includes(phase));
  if (illegal !== undefined) {
    sink.error(INVALID, `${what}: type ${type} cannot use when: ${illegal} (it runs ${phases.legal.join(' or ')} only)`, at(site, 'when'), stageId);
    return undefined;
  }
  return when as CheckPhase[];
}

function parseTypedFields(
  entry: PlainObject,
  type: CheckTypeName,
  id: string,
  when: readonly CheckPhase[],
  what: string,
  site: Site,
  sink: IssueSink,
  stageId: string | undefined,
): VerifyItem | undefined {
  const fail = (key: string, message: string): undefined => {
    sink.error(INVALID, `${what}: ${message}`, at(site, key), stageId);
    return undefined;
  };
  switch (type) {
    case 'command': {
      if (!isNonEmptyString(entry.run)) return fail('run', 'type command requires a non-empty run');
      if (entry.cwd !== undefined && typeof entry.cwd !== 'string') return fail('cwd', 'cwd must be a string');
      const timeout = entry.timeout_ms === undefined ? undefined : timeoutProblem(entry.timeout_ms);
      if (timeout !== undefined) return fail('timeout_ms', timeout);
      if (entry.network !== undefined && typeof entry.network !== 'boolean') return fail('network', 'network must be a boolean (true opens a sandboxed network without the host loopback)');
      return { id, type, when, run: entry.run, ...optional(entry, 'cwd'), ...optional(entry, 'timeout_ms'), ...optional(entry, 'network') } as VerifyItem;
    }
    case 'artifact': {
      for (const key of ['path', 'basename']) {
        if (entry[key] !== undefined && !isNonEmptyString(entry[key])) return fail(key, `${key} must be a non-empty string`);
      }
      if (typeof entry.path === 'string' && (entry.path.startsWith('/') || entry.path.split(/[\\/]/).includes('..'))) {
        return fail('path', 'path must be relative to the attempt artifact directory and must not contain ..');
      }
      if (entry.path === undefined && entry.basename === undefined) return fail('path', 'type artifact requires path (or basename)');
      for (const key of ['nonempty', 'runner_evidence']) {
        if (entry[key] !== undefined && typeof entry[key] !== 'boolean') return fail(key, `${key} must be a boolean`);
      }
      if (entry.sections !== undefined && !(isStringArray(entry.sections) && entry.sections.length > 0 && entry.sections.every(isNonEmptyString))) {
        return fail('sections', 'sections must be a non-empty list of non-empty strings');
      }
      if ((entry.sections !== undefined || entry.runner_evidence !== undefined) && !when.includes('after')) {
        return fail('when', 'sections and runner_evidence read the file on disk, so they need when to include after');
      }
      return {
        id, type, when,
        ...optional(entry, 'path'), ...optional(entry, 'basename'), ...optional(entry, 'nonempty'),
        ...optional(entry, 'sections'), ...optional(entry, 'runner_evidence'),
      } as VerifyItem;
    }
    case 'checklist': {
      if (!(isStringArray(entry.items) && entry.items.length > 0 && entry.items.every(isNonEmptyString))) {
        return fail('items', 'type checklist requires items: a non-empty list of non-empty strings');
      }
      return { id, type, when, items: entry.items };
    }
    case 'payload_schema':
      return { id, type, when };
    case 'gate': {
      if (typeof entry.kind !== 'string' || !(GATE_KINDS as readonly string[]).includes(entry.kind)) {
        return fail('kind', `type gate requires kind: one of ${GATE_KINDS.join(', ')}`);
      }
      return { id, type, when, kind: entry.kind as GateKind };
    }
    case 'checkout_changes': {
      if (entry.path_fields !== undefined && !(isStringArray(entry.path_fields) && entry.path_fields.every(isNonEmptyString))) {
        return fail('path_fields', 'path_fields must be a list of field names');
      }
      return { id, type, when, ...optional(entry, 'path_fields') } as VerifyItem;
    }
    default: {
      const unreachable: never = type;
      throw new Error(`unhandled check type ${String(unreachable)}`);
    }
  }
}

function optional(entry: PlainObject, key: string): PlainObject {
  return entry[key] === undefined ? {} : { [key]: entry[key] };
}

export function stageLabel(stageId: string | undefined): string {
  return stageId === undefined ? '' : `stage "${stageId}": `;
}
