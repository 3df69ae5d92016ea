/** Test support (not a test file): an in-memory BlobStore, temp dirs, and a base after-check context. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlobStore } from '@stageflow/eventlog';
import { blobDigest } from '../snapshot/digest';
import type { AfterCheckContext } from '../types';

export class MemoryBlobStore implements BlobStore {
  readonly blobs = new Map<string, Uint8Array>();
  puts = 0;
  /** Every byte handed to put or putStream, stored or not. */
  bytesReceived = 0;

  async put(bytes: Uint8Array): Promise<string> {
    this.bytesReceived += bytes.length;
    return this.store(bytes);
  }

  async putStream(source: AsyncIterable<Uint8Array>): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of source) {
      this.bytesReceived += chunk.length;
      chunks.push(Buffer.from(chunk));
    }
    return this.store(Buffer.concat(chunks));
  }

  private store(bytes: Uint8Array): string {
    this.puts++;
    const digest = blobDigest(bytes);
    if (!this.blobs.has(digest)) this.blobs.set(digest, Uint8Array.from(bytes));
    return digest;
  }

  async get(digest: string): Promise<Uint8Array | undefined> {
    return this.blobs.get(digest);
  }

  async has(digest: string): Promise<boolean> {
    return this.blobs.has(digest);
  }

  async close(): Promise<void> {}
}

/** A fresh temp dir, removed after the current test file. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `sf-checks-${prefix}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function baseContext(overrides: Partial<AfterCheckContext> = {}): AfterCheckContext {
  return {
    checkoutDir: tmpdir(),
    artifactsDir: tmpdir(),
    envelope: { status: 'success', summary: 'done', artifacts: [] },
    outputSchema: { type: 'object' },
    operatorExchanges: [],
    ...overrides,
  };
}
