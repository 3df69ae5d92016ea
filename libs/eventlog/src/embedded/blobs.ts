import { randomUUID } from 'node:crypto';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { digestHex, digestOf } from '../digest';
import { spoolToFile } from '../spool';
import type { BlobStore } from '../types';

/**
 * Blobs as files `<dir>/sha256/<hex>`. A blob is written to a temporary file and renamed into
 * place, so a reader sees either no file or the whole blob, in this or any other process.
 */
export class EmbeddedBlobStore implements BlobStore {
  constructor(private readonly dir: string) {}

  private path(digest: string): string {
    return join(this.dir, 'sha256', digestHex(digest));
  }

  async put(bytes: Uint8Array): Promise<string> {
    const digest = digestOf(bytes);
    const target = this.path(digest);
    if (await this.has(digest)) return digest;
    const tmp = await this.tempFile();
    try {
      await writeFile(tmp, bytes, { flush: true });
      await rename(tmp, target);
    } finally {
      await rm(tmp, { force: true });
    }
    return digest;
  }

  async putStream(source: AsyncIterable<Uint8Array>): Promise<string> {
    const tmp = await this.tempFile();
    try {
      const { digest } = await spoolToFile(source, tmp);
      if (!(await this.has(digest))) await rename(tmp, this.path(digest));
      return digest;
    } finally {
      await rm(tmp, { force: true });
    }
  }

  private async tempFile(): Promise<string> {
    const tmpDir = join(this.dir, 'tmp');
    await mkdir(tmpDir, { recursive: true });
    await mkdir(join(this.dir, 'sha256'), { recursive: true });
    return join(tmpDir, randomUUID());
  }

  async get(digest: string): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(await readFile(this.path(digest)));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async has(digest: string): Promise<boolean> {
    try {
      await access(this.path(digest));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async close(): Promise<void> {}
}

function isNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && err.code === 'ENOENT';
}
