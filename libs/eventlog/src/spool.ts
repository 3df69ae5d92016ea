import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';

export interface Spooled {
  readonly digest: string;
  readonly size: number;
}

/**
 * Writes what `source` yields to a new file at `path` (created exclusively), hashing as it goes;
 * at most one chunk is held in memory. An error of the source is rethrown as is; the caller
 * removes `path` either way.
 */
export async function spoolToFile(source: AsyncIterable<Uint8Array>, path: string): Promise<Spooled> {
  const hash = createHash('sha256');
  let size = 0;
  const handle = await open(path, 'wx');
  try {
    for await (const chunk of source) {
      hash.update(chunk);
      let written = 0;
      while (written < chunk.length) written += (await handle.write(chunk, written, chunk.length - written)).bytesWritten;
      size += chunk.length;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { digest: `sha256:${hash.digest('hex')}`, size };
}
