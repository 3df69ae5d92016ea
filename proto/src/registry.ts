/**
 * The committed schema documents, loaded from `proto/schemas/`, and an Ajv (draft 2020-12) that
 * knows all of them by `$id`, so cross-file `$ref`s (e.g. `RunEvent` → `events/*`) resolve.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';

export const SCHEMAS_DIR = path.join(__dirname, '..', 'schemas');
export const SCHEMA_BASE_ID = 'https://stageflow.dev/proto/';

export interface SchemaDocument {
  readonly $id: string;
  readonly title: string;
  readonly [keyword: string]: unknown;
}

/** Every `*.schema.json` under `dir`, keyed by path relative to it (posix separators), sorted. */
export function loadSchemas(dir: string = SCHEMAS_DIR): ReadonlyMap<string, SchemaDocument> {
  const out = new Map<string, SchemaDocument>();
  const walk = (sub: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.schema.json')) {
        out.set(rel, JSON.parse(fs.readFileSync(path.join(dir, rel), 'utf8')) as SchemaDocument);
      }
    }
  };
  walk('');
  return new Map([...out].sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Strict Ajv with every schema registered (not yet compiled). Union `type` arrays are allowed
 * (`string | null` maps to `["string","null"]`); format assertions are off (none are emitted).
 */
export function createAjv(
  schemas: ReadonlyMap<string, SchemaDocument> = loadSchemas(),
  options: { readonly allErrors?: boolean } = {},
): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: options.allErrors ?? false });
  for (const doc of schemas.values()) ajv.addSchema(doc);
  return ajv;
}
