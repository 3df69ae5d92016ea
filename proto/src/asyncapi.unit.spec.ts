/**
 * The AsyncAPI document is coherent with the schemas: every `$ref` resolves (in-document JSON
 * pointers and files beside it), every run event has a message on `sf.evt.run.{runId}`, and
 * every schema document is the payload of some message.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { loadSchemas } from './registry';

const PROTO = path.join(__dirname, '..');
const doc = parse(fs.readFileSync(path.join(PROTO, 'asyncapi.yaml'), 'utf8')) as AsyncApi;
const schemas = loadSchemas();

interface Message {
  readonly payload: { readonly schemaFormat: string; readonly schema: { readonly $ref: string } };
}
interface AsyncApi {
  readonly asyncapi: string;
  readonly channels: Record<string, { address: string | null; messages: Record<string, { $ref: string }> }>;
  readonly components: { readonly messages: Record<string, Message> };
}

function refs(node: unknown, at = ''): { at: string; ref: string }[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => refs(item, `${at}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string' ? [{ at, ref: value }] : refs(value, `${at}/${key}`),
  );
}

function resolvePointer(root: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], root);
}

const eventTypes = (schemas.get('RunEvent.schema.json') as unknown as { oneOf: { $ref: string }[] }).oneOf.map(
  (m) => m.$ref.replace(/^events\//, '').replace(/\.schema\.json$/, ''),
);

describe('proto/asyncapi.yaml', () => {
  it('is AsyncAPI 3.0.0 with the bus subjects', () => {
    expect(doc.asyncapi).toBe('3.0.0');
    const addresses = Object.values(doc.channels).map((c) => c.address);
    expect(addresses).toEqual(
      expect.arrayContaining(['sf.evt.run.{runId}', 'sf.cmd.run.request', 'sf.evt.request.rejected', 'sf.work.agent', 'sf.work.verify']),
    );
  });

  it('resolves every $ref', () => {
    const unresolved = refs(doc).filter(({ ref }) => {
      if (ref.startsWith('#')) return resolvePointer(doc, ref.slice(1)) === undefined;
      const [file, fragment] = ref.split('#');
      const full = path.join(PROTO, file);
      if (!fs.existsSync(full)) return true;
      return fragment !== undefined && resolvePointer(JSON.parse(fs.readFileSync(full, 'utf8')), fragment) === undefined;
    });
    expect(unresolved).toEqual([]);
  });

  it('has a message on sf.evt.run.{runId} for every RunEvent type', () => {
    const channel = Object.values(doc.channels).find((c) => c.address === 'sf.evt.run.{runId}')!;
    const missing = eventTypes.filter(
      (type) =>
        channel.messages[type]?.$ref !== `#/components/messages/${type}` ||
        doc.components.messages[type]?.payload.schema.$ref !== `./schemas/events/${type}.schema.json`,
    );
    if (missing.length > 0) {
      throw new Error(
        `proto/asyncapi.yaml lacks messages for: ${missing.join(', ')}. Add each to channels.runEvents.messages, ` +
          'operations.sendRunEvent.messages and components.messages (payload ./schemas/events/<Type>.schema.json).',
      );
    }
  });

  it('uses every schema document as a message payload (the RunEvent union aside)', () => {
    const payloads = new Set(Object.values(doc.components.messages).map((m) => m.payload.schema.$ref));
    const unused = [...schemas.keys()].filter((rel) => rel !== 'RunEvent.schema.json' && !payloads.has(`./schemas/${rel}`));
    expect(unused).toEqual([]);
    for (const m of Object.values(doc.components.messages)) {
      expect(m.payload.schemaFormat).toBe('application/schema+json;version=2020-12');
    }
  });
});
