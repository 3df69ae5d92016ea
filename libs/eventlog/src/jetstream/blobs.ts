import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { digestHex, digestOf } from '../digest';
import type { BlobStore } from '../types';
import { natsCall } from './errors';
import { smallBlobSubject } from './streams';

/** Blobs up to this size are one message of the small-blob stream; larger ones go to the object store. */
export const SMALL_BLOB_BYTES = 512 * 1024;

/**
 * Content-addressed blobs. A small blob (most files of a checkout, manifests, evidence) is one
 * message on `<ns>.blob.<hex>` in a stream that keeps one message per subject, written with the
 * digest as msg id and read by direct get: one request each way. A large blob is an object named
 * `sha256-<hex>` in the namespace's object store bucket. A put of bytes already stored writes
 * nothing; a get looks in both places.
 */
export class JetStreamBlobStore implements BlobStore {
  private constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly bucket: ObjectStore,
    private readonly namespace: string,
    private readonly smallStream: string,
  ) {}

  static async open(js: JetStreamClient, jsm: JetStreamManager, bucket: string, namespace: string, smallStream: string): Promise<JetStreamBlobStore> {
    const store = await natsCall(`open object store ${bucket}`, () => new Objm(js).create(bucket));
    return new JetStreamBlobStore(js, jsm, store, namespace, smallStream);
  }

  async put(bytes: Uint8Array): Promise<string> {
    const digest = digestOf(bytes);
    if (bytes.length <= SMALL_BLOB_BYTES) {
      if (!(await this.smallBlob(digest))) {
        await natsCall(`put ${digest}`, () => this.js.publish(smallBlobSubject(this.namespace, digestHex(digest)), bytes, { msgID: digest }));
      }
      return digest;
    }
    if (!(await this.inBucket(digest))) {
      await natsCall(`put ${digest}`, () => this.bucket.putBlob({ name: objectName(digest) }, bytes));
    }
    return digest;
  }

  async get(digest: string): Promise<Uint8Array | undefined> {
    const small = await this.smallBlob(digest);
    if (small) return small;
    const bytes = await natsCall(`get ${digest}`, () => this.bucket.getBlob(objectName(digest)));
    return bytes ?? undefined;
  }

  async has(digest: string): Promise<boolean> {
    return (await this.smallBlob(digest)) !== undefined || (await this.inBucket(digest));
  }

  async close(): Promise<void> {}

  private async smallBlob(digest: string): Promise<Uint8Array | undefined> {
    const message = await natsCall(`get ${digest}`, () => this.jsm.direct.getMessage(this.smallStream, { last_by_subj: smallBlobSubject(this.namespace, digestHex(digest)) }));
    return message ? message.data : undefined;
  }

  private async inBucket(digest: string): Promise<boolean> {
    const info = await natsCall(`info ${digest}`, () => this.bucket.info(objectName(digest)));
    return info !== null && !info.deleted;
  }
}

function objectName(digest: string): string {
  return `sha256-${digestHex(digest)}`;
}
