#!/usr/bin/env node
/**
 * Generates the JSON Schemas of the wire contract (draft 2020-12) from the TypeScript types.
 *
 *   node proto/scripts/generate.js          writes proto/schemas/** (and deletes stale files)
 *   require('./generate').generateAll()     the same documents in memory (used by the drift test)
 *
 * Guarantees:
 * - The event list is the `RunEvent` union itself: an event added to `libs/domain/src/events.ts`
 *   gets its schema on the next run, and generation fails if a member is not a named, exported
 *   interface whose `type` literal equals its name.
 * - Output is deterministic (sorted `$defs`, fixed key order), so equal types give equal files.
 * - Every document is self-contained except `RunEvent.schema.json`, which references the
 *   per-event files relatively (resolved against its `$id`).
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const tsj = require('ts-json-schema-generator');

const ROOT = path.resolve(__dirname, '..', '..');
const SCHEMAS_DIR = path.join(ROOT, 'proto', 'schemas');
const BASE_ID = 'https://stageflow.dev/proto/';
const DRAFT = 'https://json-schema.org/draft/2020-12/schema';

const SOURCES = ['libs/domain/src/events.ts', 'libs/domain/src/run-request.ts', 'proto/src/jobs.ts'];

/** Non-event documents: schema path (relative to proto/schemas) → TypeScript type name. */
const FIXED = {
  'commands/RunRequestCommand.schema.json': 'RunRequestCommand',
  'replies/RunRequestReply.schema.json': 'RunRequestReply',
  'events/RunRequestRejected.schema.json': 'RunRequestRejected',
  'jobs/AgentJob.schema.json': 'AgentJob',
  'jobs/VerifyJob.schema.json': 'VerifyJob',
};

function createGenerator() {
  return tsj.createGenerator({
    path: `{${SOURCES.map((s) => path.join(ROOT, s)).join(',')}}`,
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    type: '*',
    expose: 'export',
    topRef: false,
    jsDoc: 'extended',
    additionalProperties: false,
    skipTypeCheck: true,
    sortProps: false,
  });
}

/** Rewrites draft-07 `definitions` / `#/definitions/` into 2020-12 `$defs` / `#/$defs/`. */
function toDefs(node) {
  if (Array.isArray(node)) return node.map(toDefs);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/definitions/')) {
      out.$ref = `#/$defs/${value.slice('#/definitions/'.length)}`;
    } else {
      out[key] = toDefs(value);
    }
  }
  return out;
}

/** Wraps a generated schema as a 2020-12 document with `$id` and title; `$defs` sorted. */
function document(relPath, title, generated) {
  const { $schema: _draft07, definitions = {}, ...body } = generated;
  const defs = {};
  for (const name of Object.keys(definitions).sort()) defs[name] = toDefs(definitions[name]);
  const doc = { $schema: DRAFT, $id: BASE_ID + relPath, title, ...toDefs(body) };
  if (Object.keys(defs).length > 0) doc.$defs = defs;
  return doc;
}

/** Names of the `RunEvent` union members, in declaration order; throws on anything unnamed. */
function runEventTypes(generator) {
  const union = generator.createSchema('RunEvent');
  const members = union.anyOf;
  if (!Array.isArray(members)) throw new Error('RunEvent is expected to be a union of interfaces');
  return members.map((member) => {
    const name = typeof member.$ref === 'string' ? member.$ref.replace('#/definitions/', '') : null;
    const def = name && union.definitions[name];
    const literal = def && def.properties && def.properties.type && def.properties.type.const;
    if (!name || literal !== name) {
      throw new Error(
        `RunEvent member ${JSON.stringify(member)} must be an exported interface named after its \`type\` literal`,
      );
    }
    return name;
  });
}

/**
 * Every schema document, keyed by path relative to proto/schemas (posix separators).
 * @returns {{ files: Record<string, object>, eventTypes: string[] }}
 */
function generateAll() {
  const generator = createGenerator();
  const eventTypes = runEventTypes(generator);
  const files = {};
  for (const type of eventTypes) {
    const rel = `events/${type}.schema.json`;
    files[rel] = document(rel, type, generator.createSchema(type));
  }
  files['RunEvent.schema.json'] = {
    $schema: DRAFT,
    $id: `${BASE_ID}RunEvent.schema.json`,
    title: 'RunEvent',
    description: 'Any event of a run, as appended to `sf.evt.run.<runId>`; `type` discriminates.',
    oneOf: eventTypes.map((type) => ({ $ref: `events/${type}.schema.json` })),
  };
  for (const [rel, type] of Object.entries(FIXED)) {
    files[rel] = document(rel, type, generator.createSchema(type));
  }
  return { files, eventTypes };
}

/** Serialized form of a document as committed. */
const serialize = (doc) => `${JSON.stringify(doc, null, 2)}\n`;

/** Every *.schema.json under proto/schemas, relative, posix separators. */
function committedSchemaPaths(dir = SCHEMAS_DIR, prefix = '') {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? committedSchemaPaths(path.join(dir, entry.name), `${prefix}${entry.name}/`)
      : entry.name.endsWith('.schema.json')
        ? [`${prefix}${entry.name}`]
        : [],
  );
}

function main() {
  const { files } = generateAll();
  for (const stale of committedSchemaPaths().filter((rel) => !(rel in files))) {
    fs.rmSync(path.join(SCHEMAS_DIR, stale));
    console.log(`removed  proto/schemas/${stale}`);
  }
  for (const [rel, doc] of Object.entries(files)) {
    const file = path.join(SCHEMAS_DIR, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, serialize(doc));
  }
  console.log(`wrote ${Object.keys(files).length} schemas to proto/schemas`);
}

module.exports = { generateAll, committedSchemaPaths, serialize, SCHEMAS_DIR, BASE_ID };

if (require.main === module) main();
