import type { JetStreamClient } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { digestHex, digestOf } from '../digest';
import type { BlobStore } from '../types';
import { natsCall } from './errors';

/**
 * Blobs in a JetStream object store bucket, one object per digest named `sha256-<hex>`.
 * A put of bytes already stored writes nothing.
 */
export class JetStreamBlobStore implements BlobStore {
  private constructor(private readonly bucket: ObjectStore) {}

  static async open(js: JetStreamClient, bucket: string): Promise<JetStreamBlobStore> {
    const store = await natsCall(`open object store ${bucket}`, () => new Objm(js).create(bucket));
    return new JetStreamBlobStore(store);
  }

  async put(bytes: Uint8Array): Promise<string> {
    const digest = digestOf(bytes);
    if (!(await this.has(digest))) {
      await natsCall(`put ${digest}`, () => this.bucket.putBlob({ name: objectName(digest) }, bytes));
    }
    return digest;
  }

  async get(digest: string): Promise<Uint8Array | undefined> {
    const bytes = await natsCall(`get ${digest}`, () => this.bucket.getBlob(objectName(digest)));
    return bytes ?? undefined;
  }

  async has(digest: string): Promise<boolean> {
    const info = await natsCall(`info ${digest}`, () => this.bucket.info(objectName(digest)));
    return info !== null && !info.deleted;
  }

  async close(): Promise<void> {}
}

function objectName(digest: string): string {
  return `sha256-${digestHex(digest)}`;
}
