import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { digestHex, digestOf } from '../digest';
import type { BlobStore } from '../types';
import { spoolToFile } from '../spool';
import { EventLogError } from '../errors';
import { isNotFound, notSetUp } from './binding';
import { natsCall } from './errors';
import { smallBlobSubject } from './streams';

/** Blobs up to this size are one message of the small-blob stream; larger ones go to the object store. */
export const SMALL_BLOB_BYTES = 512 * 1024;

/**
 * Content-addressed blobs. A small blob (most files of a checkout, manifests, evidence) is one
 * message on `<ns>.blob.<hex>` in a stream that keeps one message per subject, written with the
 * digest as msg id and read by direct get: one request each way. A large blob is an object named
 * `sha256-<hex>` in the namespace's object store bucket. A put of bytes already stored writes
 * nothing; a get looks in both places. A streamed put is spooled to a private temporary file
 * (hashed on the way) and then stored from it, so the object is only ever named by its digest.
 */
export class JetStreamBlobStore implements BlobStore {
  private opened?: Promise<ObjectStore>;

  private constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly bucketName: string,
    private readonly namespace: string,
    private readonly smallStream: string,
  ) {}

  /**
   * With `provision` (admin) creates the namespace's bucket now; otherwise the bucket is opened at
   * the first large blob, so a process that never touches blobs needs no rights on it.
   */
  static async open(js: JetStreamClient, jsm: JetStreamManager, bucket: string, namespace: string, smallStream: string, provision = true): Promise<JetStreamBlobStore> {
    const store = new JetStreamBlobStore(js, jsm, bucket, namespace, smallStream);
    if (provision) store.opened = natsCall(`open object store ${bucket}`, () => new Objm(js).create(bucket));
    await store.opened;
    return store;
  }

  private bucket(): Promise<ObjectStore> {
    this.opened ??= natsCall(`open object store ${this.bucketName}`, async () => {
      try {
        return await new Objm(this.js).open(this.bucketName);
      } catch (err) {
        if (isNotFound(err) || (err instanceof Error && err.message === 'object store not found')) throw notSetUp(`object store ${this.bucketName}`, this.namespace);
        throw err;
      }
    });
    // A failed open is tried again by the next call.
    this.opened.catch(() => (this.opened = undefined));
    return this.opened;
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
      await natsCall(`put ${digest}`, async () => (await this.bucket()).putBlob({ name: objectName(digest) }, bytes));
    }
    return digest;
  }

  async putStream(source: AsyncIterable<Uint8Array>): Promise<string> {
    const spoolDir = await mkdtemp(join(tmpdir(), 'sf-blob-'));
    try {
      const spool = join(spoolDir, randomUUID());
      const { digest, size } = await spoolToFile(source, spool);
      if (size <= SMALL_BLOB_BYTES) return await this.put(await readFile(spool));
      if (!(await this.inBucket(digest))) {
        const stream = Readable.toWeb(createReadStream(spool)) as ReadableStream<Uint8Array>;
        await natsCall(`put ${digest}`, async () => (await this.bucket()).put({ name: objectName(digest) }, stream));
      }
      return digest;
    } finally {
      await rm(spoolDir, { recursive: true, force: true });
    }
  }

  /**
   * Whoever may put blobs may also overwrite the message or object stored under a digest, so the
   * bytes are checked against the digest they are read by: a mismatch fails, never returns them.
   */
  async get(digest: string): Promise<Uint8Array | undefined> {
    const bytes = (await this.smallBlob(digest)) ?? (await natsCall(`get ${digest}`, async () => (await this.bucket()).getBlob(objectName(digest)))) ?? undefined;
    if (bytes !== undefined && digestOf(bytes) !== digest) throw new EventLogError(`blob ${digest}: the stored bytes do not match their digest`, false);
    return bytes;
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
    const info = await natsCall(`info ${digest}`, async () => (await this.bucket()).info(objectName(digest)));
    return info !== null && !info.deleted;
  }
}

function objectName(digest: string): string {
  return `sha256-${digestHex(digest)}`;
}
