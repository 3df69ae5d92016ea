/**
 * Golden examples: `proto/examples/<Title>.json` (and optional `<Title>.<variant>.json`) for every
 * schema document, each valid against its schema; event and run-request examples also pass the
 * boundary validators.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createAjv, loadSchemas } from './registry';
import { validateEvent, validateRunRequest } from './validate';

const EXAMPLES_DIR = path.join(__dirname, '..', 'examples');
const schemas = loadSchemas();
const ajv = createAjv(schemas);
const byTitle = new Map([...schemas.values()].map((doc) => [doc.title, doc]));
const examples = fs
  .readdirSync(EXAMPLES_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({
    file,
    title: file.split('.')[0]!,
    value: JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8')) as unknown,
  }));
const eventTypes = new Set(
  (schemas.get('RunEvent.schema.json') as unknown as { oneOf: { $ref: string }[] }).oneOf.map((m) =>
    m.$ref.replace(/^events\//, '').replace(/\.schema\.json$/, ''),
  ),
);

describe('proto/examples', () => {
  it('cover every schema (the RunEvent union aside)', () => {
    const titles = new Set(examples.map((e) => e.title));
    const missing = [...byTitle.keys()].filter((t) => t !== 'RunEvent' && !titles.has(t));
    expect(missing).toEqual([]);
  });

  it.each(examples)('$file is named after a schema and valid against it', ({ title, value }) => {
    const schema = byTitle.get(title);
    expect(schema).toBeDefined();
    const validate = ajv.getSchema(schema!.$id)!;
    expect(validate(value) ? [] : validate.errors).toEqual([]);
  });

  it.each(examples.filter((e) => eventTypes.has(e.title)))('$file passes validateEvent', ({ value }) => {
    expect(validateEvent(value)).toBeNull();
  });

  it.each(examples.filter((e) => e.title === 'RunRequestCommand'))('$file passes validateRunRequest', ({ value }) => {
    expect(validateRunRequest(value)).toBeNull();
  });
});
