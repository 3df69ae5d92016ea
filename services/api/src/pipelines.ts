/**
 * Published pipelines: `sf pipelines publish` and `POST /api/pipelines` store a validated pipeline
 * bundle (`{entry, files}`) in the log on `<ns>.evt.pipeline.<id>`; run requests name it by
 * reference `{id, version?}`.
 *
 * Guarantees:
 * - Content-addressed: the digest is sha256 over the bundle's canonical form (entry, then files
 *   sorted by path). Publishing content already published under this id stores nothing and
 *   answers its existing version; new content gets the next version.
 * - Versions are a counter per id: "1", "2", …, appended with optimistic concurrency, so two
 *   concurrent publishers never get the same number. The latest version is the highest.
 * - A reference names a version by its number or by its full digest (`sha256:<hex>`); no version
 *   means the latest. An unknown id or version is the typed refusal `pipeline.unknown`.
 * - Nothing invalid is stored: a bundle is loaded through the catalog before it is published and
 *   again when a run resolves it.
 */
import { createHash } from 'node:crypto';
import { InvalidCommand, type InlinePipelineBundle, type PipelineDefinition, type PipelineReference } from '@stageflow/domain';
import { WrongExpectedSequenceError, type EventLog } from '@stageflow/eventlog';
import { loadBundle } from './pipeline-bundle';
import type { PipelineResolver } from './run-requests';

/** One stored version of a pipeline: the message on `<ns>.evt.pipeline.<id>`. */
export interface PipelinePublished {
  readonly v: 1;
  readonly type: 'PipelinePublished';
  readonly id: string;
  readonly version: string;
  readonly digest: string;
  readonly bundle: InlinePipelineBundle;
  readonly publishedAt: string;
  readonly publishedBy: string;
}

export interface PublishResult {
  readonly id: string;
  readonly version: string;
  readonly digest: string;
  /** False when this content was already published under this id. */
  readonly created: boolean;
}

export interface PipelineListing {
  readonly id: string;
  readonly latest_version: string;
  readonly digest: string;
  readonly versions: number;
  readonly published_at: string;
}

export interface PipelineVersionView {
  readonly id: string;
  readonly version: string;
  readonly digest: string;
  readonly published_at: string;
  readonly published_by: string;
  readonly latest: boolean;
  readonly stages: readonly string[];
  readonly bundle: InlinePipelineBundle;
}

/** A published id is one subject token. */
const PUBLISHABLE_ID = /^[A-Za-z0-9_-]{1,128}$/;
const MAX_PUBLISH_CONFLICTS = 20;

export function bundleDigest(bundle: InlinePipelineBundle): string {
  const files = Object.keys(bundle.files)
    .sort()
    .map((p) => [p, bundle.files[p]]);
  return `sha256:${createHash('sha256').update(JSON.stringify({ entry: bundle.entry, files })).digest('hex')}`;
}

export class PublishedPipelines implements PipelineResolver {
  constructor(
    private readonly log: EventLog,
    private readonly namespace: string,
  ) {}

  subject(id: string): string {
    return `${this.namespace}.evt.pipeline.${id}`;
  }

  /** Validates the bundle (catalog rules, as `sf validate`) and stores it unless this content is already stored. */
  async publish(bundle: InlinePipelineBundle, publishedBy: string): Promise<PublishResult> {
    if (bundle === null || typeof bundle !== 'object' || typeof bundle.entry !== 'string' || bundle.files === null || typeof bundle.files !== 'object') {
      throw new InvalidCommand('request.bundle_invalid', 'a pipeline bundle is {"entry": "<file>", "files": {"<path>": "<text>"}}');
    }
    const pipeline = loadBundle(bundle);
    if (!PUBLISHABLE_ID.test(pipeline.id)) {
      throw new InvalidCommand('pipeline.id_not_publishable', `pipeline id ${JSON.stringify(pipeline.id)} cannot be published: use 1-128 letters, digits, "_" or "-"`);
    }
    const canonical: InlinePipelineBundle = { entry: bundle.entry, files: { ...bundle.files } };
    const digest = bundleDigest(canonical);
    for (let conflicts = 0; ; conflicts++) {
      const read = await this.log.readSubject<PipelinePublished>(this.subject(pipeline.id));
      const same = read.messages.find((m) => m.data.digest === digest);
      if (same) return { id: pipeline.id, version: same.data.version, digest, created: false };
      const record: PipelinePublished = {
        v: 1,
        type: 'PipelinePublished',
        id: pipeline.id,
        version: String(read.messages.length + 1),
        digest,
        bundle: canonical,
        publishedAt: new Date().toISOString(),
        publishedBy,
      };
      try {
        await this.log.append(this.subject(pipeline.id), record, { expectedLastSubjectSequence: read.lastSubjectSequence });
        return { id: record.id, version: record.version, digest, created: true };
      } catch (err) {
        if (!(err instanceof WrongExpectedSequenceError) || conflicts >= MAX_PUBLISH_CONFLICTS) throw err;
      }
    }
  }

  async list(): Promise<PipelineListing[]> {
    const byId = new Map<string, PipelinePublished[]>();
    for (const message of await this.log.read<PipelinePublished>(this.subject('*'))) {
      byId.set(message.data.id, [...(byId.get(message.data.id) ?? []), message.data]);
    }
    return [...byId.values()]
      .map((versions) => {
        const latest = versions[versions.length - 1];
        return { id: latest.id, latest_version: latest.version, digest: latest.digest, versions: versions.length, published_at: latest.publishedAt };
      })
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /** One version (the latest when none is named). Unknown → `pipeline.unknown`. */
  async show(ref: PipelineReference): Promise<PipelineVersionView> {
    const versions = await this.versions(ref.id);
    const record = pick(ref, versions);
    return {
      id: record.id,
      version: record.version,
      digest: record.digest,
      published_at: record.publishedAt,
      published_by: record.publishedBy,
      latest: record === versions[versions.length - 1],
      stages: loadBundle(record.bundle).stages.map((s) => s.id),
      bundle: record.bundle,
    };
  }

  async resolve(ref: PipelineReference): Promise<PipelineDefinition> {
    if (ref === null || typeof ref !== 'object' || typeof ref.id !== 'string' || (ref.version !== undefined && typeof ref.version !== 'string')) {
      throw new InvalidCommand('request.invalid', 'a pipeline reference is {"id": "<id>", "version"?: "<version>"}');
    }
    return loadBundle(pick(ref, await this.versions(ref.id)).bundle);
  }

  private async versions(id: string): Promise<readonly PipelinePublished[]> {
    if (!PUBLISHABLE_ID.test(id)) return [];
    return (await this.log.readSubject<PipelinePublished>(this.subject(id))).messages.map((m) => m.data);
  }
}

function pick(ref: PipelineReference, versions: readonly PipelinePublished[]): PipelinePublished {
  if (versions.length === 0) throw new InvalidCommand('pipeline.unknown', `no pipeline ${JSON.stringify(ref.id)} is published here; publish it with sf pipelines publish`);
  if (ref.version === undefined) return versions[versions.length - 1];
  const found = versions.find((r) => r.version === ref.version || r.digest === ref.version);
  if (!found) throw new InvalidCommand('pipeline.unknown', `pipeline ${ref.id} has no version ${JSON.stringify(ref.version)} (published: 1..${versions.length})`);
  return found;
}
