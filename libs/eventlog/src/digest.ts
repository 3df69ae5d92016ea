import { createHash } from 'node:crypto';
import { invalidArgument } from './errors';

const DIGEST = /^sha256:([0-9a-f]{64})$/;

export function digestOf(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** The hex part of a `sha256:<hex>` digest; rejects anything else. */
export function digestHex(digest: string): string {
  const match = DIGEST.exec(digest);
  if (!match) throw invalidArgument(`invalid digest "${digest}": expected sha256:<64 hex>`);
  return match[1];
}
