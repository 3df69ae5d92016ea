import type { FileHandle } from 'node:fs/promises';

const CHUNK_BYTES = 1024 * 1024;

/** Thrown by readChunks as soon as a file yields more bytes than its cap. */
export class CapExceeded extends Error {
  constructor(readonly cap: number) {
    super(`more than ${cap} bytes`);
    this.name = 'CapExceeded';
  }
}

/**
 * The file's bytes from offset 0 to its end, in fresh chunks of at most 1 MiB. Never reads more
 * than `cap + 1` bytes: past `cap` it throws CapExceeded. `onChunk` sees every chunk before it is
 * yielded and may throw to stop the read.
 */
export async function* readChunks(handle: FileHandle, cap: number, onChunk?: (bytes: number) => void): AsyncGenerator<Uint8Array> {
  let position = 0;
  for (;;) {
    const want = Math.min(CHUNK_BYTES, cap + 1 - position);
    const buffer = Buffer.allocUnsafe(want);
    const { bytesRead } = await handle.read(buffer, 0, want, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    if (position > cap) throw new CapExceeded(cap);
    onChunk?.(bytesRead);
    yield buffer.subarray(0, bytesRead);
  }
}
