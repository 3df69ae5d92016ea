import { createHash } from 'node:crypto';

/** The BlobStore digest of some bytes: `sha256:<hex>`. */
export function blobDigest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}
