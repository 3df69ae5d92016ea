import type { RegExpEngine, RegExpLike } from 'ajv/dist/types';
import { RE2JS } from 're2js';

/**
 * Schema `pattern`s run on RE2 (re2js, pure JavaScript): matching time is linear in the input
 * whatever the pattern, so no payload can stall a validator. ECMAScript syntax is translated
 * first; what RE2 cannot express (lookaround, backreferences) fails to compile.
 */
export function compileLinearPattern(pattern: string): { readonly ok: true; readonly test: (text: string) => boolean } | { readonly ok: false; readonly problem: string } {
  try {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    return { ok: true, test: (text) => compiled.matcher(text).find() };
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : String(error) };
  }
}

/** ajv's `code.regExp`: throws on a pattern RE2 refuses (ajv reports it as a compile error). */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string): RegExpLike => {
    const compiled = compileLinearPattern(pattern);
    if (!compiled.ok) throw new Error(`pattern ${JSON.stringify(pattern)} is not supported by the linear-time engine: ${compiled.problem}`);
    // ajv keys compiled patterns by toString(): it must differ between patterns.
    const linear: RegExpLike & { toString(): string } = { test: compiled.test, toString: () => `re2:/${pattern}/${flags}` };
    return linear;
  },
  { code: 'linearRegExp' },
);
