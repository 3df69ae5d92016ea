/**
 * Canary secrets and the search for them in everything a deployment persisted or printed.
 *
 * A canary is found in a byte source when any of its forms occurs in it: the plain text, the
 * reversed text, lower- and upper-case hex, and base64 at each of the three byte alignments the
 * value can have inside a longer encoded text (only the characters that depend on the canary
 * alone are searched, so a match does not depend on what surrounds it).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Client } from 'pg';

export interface ByteSource {
  readonly source: string;
  readonly bytes: Buffer;
}

export interface Hit {
  readonly canary: string;
  readonly form: string;
  readonly source: string;
}

/** A fresh value that looks like a credential: `<prefix>` then 32 random alphanumerics. */
export function canaryValue(prefix: string): string {
  return `${prefix}${randomBytes(24).toString('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 24)}${randomBytes(4).toString('hex')}`;
}

export function forms(value: string): { readonly form: string; readonly text: string }[] {
  const bytes = Buffer.from(value);
  const base64 = [0, 1, 2].map((offset) => {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const first = [0, 2, 3][offset]!;
    const last = Math.floor((offset + bytes.length) / 3) * 4;
    return { form: `base64@${offset}`, text: encoded.slice(first, last) };
  });
  return [
    { form: 'plain', text: value },
    { form: 'reversed', text: [...value].reverse().join('') },
    { form: 'hex', text: bytes.toString('hex') },
    { form: 'HEX', text: bytes.toString('hex').toUpperCase() },
    ...base64,
  ];
}

export function search(canaries: Readonly<Record<string, string>>, sources: readonly ByteSource[]): Hit[] {
  const hits: Hit[] = [];
  for (const [canary, value] of Object.entries(canaries)) {
    for (const { form, text } of forms(value)) {
      const needle = Buffer.from(text);
      for (const { source, bytes } of sources) if (bytes.includes(needle)) hits.push({ canary, form, source });
    }
  }
  return hits;
}

/** Hits per canary as "<form> in <source>" lines (the first `max` of each), for a readable failure. */
export function byCanary(hits: readonly Hit[], max = 6): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const hit of hits) {
    const lines = (out[hit.canary] ??= []);
    if (lines.length < max) lines.push(`${hit.form} in ${hit.source}`);
    else if (lines.length === max) lines.push('…');
  }
  return out;
}

export const text = (source: string, value: string): ByteSource => ({ source, bytes: Buffer.from(value) });

/** Every regular file under `dir` (symbolic links are not followed), except the paths in `except`. */
export function filesUnder(dir: string, except: readonly string[] = []): ByteSource[] {
  const skip = new Set(except.map((p) => path.resolve(p)));
  const out: ByteSource[] = [];
  const walk = (at: string) => {
    if (skip.has(at)) return;
    const stat = fs.lstatSync(at, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) for (const name of fs.readdirSync(at)) walk(path.join(at, name));
    else if (stat.isFile()) out.push({ source: at, bytes: fs.readFileSync(at) });
  };
  walk(path.resolve(dir));
  return out;
}

/** Every message (headers and data) of every stream of a deployment namespace. */
export async function natsStreamContents(natsUrl: string, namespace: string): Promise<ByteSource[]> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const out: ByteSource[] = [];
    for await (const info of jsm.streams.list()) {
      const name = info.config.name;
      if (!name.startsWith(`${namespace.toUpperCase()}_`) && name !== `OBJ_${namespace}_blobs`) continue;
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const message = await jsm.streams.getMessage(name, { seq }).catch(() => null);
        if (!message) continue;
        const headers = message.header ? [...message.header.keys()].map((k) => `${k}: ${message.header!.values(k).join(',')}`).join('\n') : '';
        out.push({ source: `nats ${name} #${seq} ${message.subject}`, bytes: Buffer.concat([Buffer.from(`${message.subject}\n${headers}\n`), Buffer.from(message.data)]) });
      }
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** Every row of every table in a Postgres schema, as JSON text. */
export async function postgresSchemaContents(databaseUrl: string, schema: string): Promise<ByteSource[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>('select table_name from information_schema.tables where table_schema = $1', [schema]);
    const out: ByteSource[] = [];
    for (const { table_name } of tables.rows) {
      const quoted = `"${schema.replace(/"/g, '""')}"."${table_name.replace(/"/g, '""')}"`;
      const rows = await client.query<{ row: string }>(`select row_to_json(t)::text as row from ${quoted} t`);
      out.push({ source: `postgres ${schema}.${table_name}`, bytes: Buffer.from(rows.rows.map((r) => r.row).join('\n')) });
    }
    return out;
  } finally {
    await client.end();
  }
}
