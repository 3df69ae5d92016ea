/**
 * Drift test: the committed schemas are exactly what the TypeScript types generate today, so the
 * types and the wire contract cannot part ways. Compared as written-then-parsed JSON, so
 * formatting (e.g. prettier) is free but every keyword and value must match.
 */
import { isDeepStrictEqual } from 'node:util';
import { generateAll, serialize, type Generated } from '../scripts/generate';
import { createAjv, loadSchemas, SCHEMA_BASE_ID } from './registry';

const FIX = 'Run `npm run proto:generate` (node proto/scripts/generate.js) and commit proto/schemas.';

describe('proto schemas', () => {
  let generated: Generated;
  const committed = loadSchemas();

  beforeAll(() => {
    generated = generateAll();
  }, 120_000);

  it('match the TypeScript types (no drift, no missing or stale files)', () => {
    const problems: string[] = [];
    for (const [rel, doc] of Object.entries(generated.files)) {
      if (!committed.has(rel)) problems.push(`missing: proto/schemas/${rel}`);
      else if (!isDeepStrictEqual(committed.get(rel), JSON.parse(serialize(doc)))) problems.push(`out of date: proto/schemas/${rel}`);
    }
    for (const rel of committed.keys()) {
      if (!(rel in generated.files)) problems.push(`stale: proto/schemas/${rel}`);
    }
    if (problems.length > 0) throw new Error(`${problems.join('\n')}\n${FIX}`);
  });

  it('give every RunEvent member its own schema, and the union references each', () => {
    const union = committed.get('RunEvent.schema.json') as unknown as { oneOf: { $ref: string }[] };
    expect(generated.eventTypes.length).toBeGreaterThan(0);
    expect(union.oneOf.map((m) => m.$ref)).toEqual(
      generated.eventTypes.map((type) => `events/${type}.schema.json`),
    );
  });

  it('are draft 2020-12 documents whose $id is their path', () => {
    for (const [rel, doc] of committed) {
      expect(doc.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(doc.$id).toBe(`${SCHEMA_BASE_ID}${rel}`);
      expect(JSON.stringify(doc)).not.toContain('#/definitions/');
    }
  });

  it('compile under strict Ajv 2020', () => {
    const ajv = createAjv(committed);
    for (const doc of committed.values()) expect(() => ajv.getSchema(doc.$id)).not.toThrow();
  });
});
