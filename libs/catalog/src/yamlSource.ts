import * as fs from 'node:fs';
import { isMap, isNode, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import type { Locator, NodePath } from './issues';

/** Files larger than this are refused before parsing. */
export const MAX_YAML_BYTES = 1024 * 1024;
/** Alias expansions allowed per document (guards against "billion laughs"). */
export const MAX_ALIAS_COUNT = 100;
/** Deepest nesting of maps and lists accepted in a document. */
export const MAX_NESTING_DEPTH = 64;

export type YamlReadFailure = { readonly ok: false; readonly reason: 'unreadable' | 'invalid'; readonly message: string; readonly line?: number; readonly column?: number };
export type YamlReadSuccess = { readonly ok: true; readonly value: unknown; readonly locate: Locator };

/**
 * Parses YAML text into plain JSON plus a locator from node paths to line/column.
 * Guarantees: never throws, terminates on any input (size, alias and depth caps).
 */
export function parseYamlText(text: string): YamlReadSuccess | YamlReadFailure {
  if (Buffer.byteLength(text, 'utf8') > MAX_YAML_BYTES) {
    return { ok: false, reason: 'invalid', message: `file is larger than ${MAX_YAML_BYTES} bytes` };
  }
  if (text.includes('\u0000') || text.includes('\uFFFD')) {
    return { ok: false, reason: 'invalid', message: 'file contains binary (non UTF-8 text) bytes' };
  }
  if (exceedsBracketDepth(text)) {
    return { ok: false, reason: 'invalid', message: `YAML nesting is deeper than ${MAX_NESTING_DEPTH} levels` };
  }
  const lineCounter = new LineCounter();
  let doc: Document;
  try {
    doc = parseDocument(text, { keepSourceTokens: true, lineCounter, prettyErrors: false });
  } catch (error) {
    return { ok: false, reason: 'invalid', message: `YAML could not be parsed: ${describe(error)}` };
  }
  const firstError = doc.errors[0];
  if (firstError !== undefined) {
    const pos = lineCounter.linePos(firstError.pos[0]);
    return { ok: false, reason: 'invalid', message: `malformed YAML: ${firstError.message.split('\n')[0]}`, line: pos.line, column: pos.col };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    return { ok: false, reason: 'invalid', message: `YAML could not be read: ${describe(error)}` };
  }
  if (depthOf(value) > MAX_NESTING_DEPTH) {
    return { ok: false, reason: 'invalid', message: `YAML nesting is deeper than ${MAX_NESTING_DEPTH} levels` };
  }
  return { ok: true, value, locate: locatorFor(doc, lineCounter) };
}

/** Reads and parses one YAML file; I/O failures become a failure value, never an exception. */
export function readYamlFile(file: string): YamlReadSuccess | YamlReadFailure {
  let bytes: Buffer;
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return { ok: false, reason: 'unreadable', message: `${file} is not a regular file` };
    if (stat.size > MAX_YAML_BYTES) {
      return { ok: false, reason: 'invalid', message: `file is larger than ${MAX_YAML_BYTES} bytes` };
    }
    bytes = fs.readFileSync(file);
  } catch (error) {
    return { ok: false, reason: 'unreadable', message: `cannot read ${file}: ${describe(error)}` };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, reason: 'invalid', message: 'file contains binary (non UTF-8 text) bytes' };
  }
  return parseYamlText(text);
}

/** Points at a mapping key when the path ends on one, else at the deepest node that exists. */
function locatorFor(doc: Document, lineCounter: LineCounter): Locator {
  return (path: NodePath) => {
    const last = path[path.length - 1];
    const parent = path.length === 0 ? undefined : path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
    if (typeof last === 'string' && isMap(parent)) {
      const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === last);
      if (pair !== undefined && isNode(pair.key) && pair.key.range) {
        const pos = lineCounter.linePos(pair.key.range[0]);
        return { line: pos.line, column: pos.col };
      }
    }
    for (let length = path.length; length >= 0; length--) {
      const node = length === 0 ? doc.contents : doc.getIn(path.slice(0, length), true);
      if (isNode(node) && node.range) {
        const pos = lineCounter.linePos(node.range[0]);
        return { line: pos.line, column: pos.col };
      }
    }
    return undefined;
  };
}

/**
 * Flow collections nest without indentation; a cheap over-approximating scan (brackets inside
 * strings count too) bounds the parser's recursion before it starts.
 */
function exceedsBracketDepth(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x5b || ch === 0x7b) {
      depth++;
      if (depth > MAX_NESTING_DEPTH) return true;
    } else if ((ch === 0x5d || ch === 0x7d) && depth > 0) {
      depth--;
    }
  }
  return false;
}

function depthOf(root: unknown): number {
  let max = 0;
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop() as { value: unknown; depth: number };
    if (depth > max) max = depth;
    if (max > MAX_NESTING_DEPTH) return max;
    if (typeof value === 'object' && value !== null) {
      for (const child of Object.values(value)) stack.push({ value: child, depth: depth + 1 });
    }
  }
  return max;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
