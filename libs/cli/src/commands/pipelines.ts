/**
 * `sf pipelines publish|list|show`: pipelines published to the log, for run requests that name
 * them by reference `{id, version?}`. Against the embedded log or `NATS_URL` directly; with
 * `--server <api-url>` through the API (`SF_API_TOKEN`).
 */
import type { Command } from 'commander';
import type { PipelineListing, PipelineVersionView, PublishResult } from '@stageflow/api';
import type { InlinePipelineBundle, PipelineReference } from '@stageflow/domain';
import type { Infrastructure } from '@stageflow/runtime';
import type { Output } from '../output';
import { bundlePipeline } from '../remote/bundle';
import { ApiClient } from '../remote/client';
import { openLog } from '../session';

/** Where published pipelines live for this command: the log this process opens, or a cluster's API. */
interface PipelineStore {
  publish(bundle: InlinePipelineBundle): Promise<PublishResult>;
  list(): Promise<readonly PipelineListing[]>;
  show(ref: PipelineReference): Promise<PipelineVersionView>;
}

async function withStore<T>(server: string | undefined, fn: (store: PipelineStore) => Promise<T>): Promise<T> {
  if (server !== undefined) {
    const client = ApiClient.fromEnv(server);
    return fn({
      publish: (bundle) => client.publishPipeline(bundle),
      list: async () => (await client.pipelines<{ pipelines: PipelineListing[] }>()).pipelines,
      show: (ref) => client.pipeline<PipelineVersionView>(ref.id, ref.version),
    });
  }
  const infra: Infrastructure = await openLog();
  try {
    const { PublishedPipelines } = await import('@stageflow/api');
    const published = new PublishedPipelines(infra.log, infra.config.namespace);
    return await fn({
      publish: (bundle) => published.publish(bundle, `cli:${process.env.USER ?? 'unknown'}`),
      list: () => published.list(),
      show: (ref) => published.show(ref),
    });
  } finally {
    await infra.close();
  }
}

export function registerPipelines(program: Command, out: Output, setExit: (code: number) => void): void {
  const pipelines = program.command('pipelines').description('pipelines published to the cluster (or the embedded log), to run by reference');
  const server = (c: Command) => c.option('--server <api-url>', 'a cluster\'s API (token from SF_API_TOKEN) instead of the log named by NATS_URL / STAGEFLOW_HOME');

  server(
    pipelines
      .command('publish')
      .description('validate a pipeline with its stage files, and store it content-addressed: same content, same version')
      .argument('<file>', 'the *.pipeline.yaml')
      .option('--json', 'print {id, version, digest, created} as JSON'),
  ).action(async (file: string, flags: { json?: boolean; server?: string }) => {
    const { bundle } = bundlePipeline(file);
    const result = await withStore(flags.server, (store) => store.publish(bundle));
    out.out(flags.json ? JSON.stringify(result) : `${result.created ? 'published' : 'already published'} ${result.id} version ${result.version} (${result.digest})`);
    setExit(0);
  });

  server(pipelines.command('list').description('published pipelines and their latest versions').option('--json', 'print JSON')).action(async (flags: { json?: boolean; server?: string }) => {
    const rows = await withStore(flags.server, (store) => store.list());
    if (flags.json) out.out(JSON.stringify({ pipelines: rows }, null, 2));
    else out.out(rows.length ? rows.map((r) => `${r.id}  version ${r.latest_version}  (${r.versions} version${r.versions === 1 ? '' : 's'})  ${r.digest.slice(0, 19)}  ${r.published_at}`).join('\n') : 'no pipelines published');
    setExit(0);
  });

  server(
    pipelines
      .command('show')
      .description('one published version (the latest unless --version)')
      .argument('<id>', 'pipeline id')
      .option('--version <version>', 'a version number or its digest sha256:<hex>')
      .option('--json', 'print JSON, with the bundled files'),
  ).action(async (id: string, flags: { version?: string; json?: boolean; server?: string }) => {
    const view = await withStore(flags.server, (store) => store.show({ id, ...(flags.version !== undefined ? { version: flags.version } : {}) }));
    if (flags.json) out.out(JSON.stringify(view, null, 2));
    else {
      out.out(
        [
          `${view.id} version ${view.version}${view.latest ? ' (latest)' : ''}`,
          `digest     ${view.digest}`,
          `published  ${view.published_at} by ${view.published_by}`,
          `stages     ${view.stages.join(', ')}`,
          `files      ${Object.keys(view.bundle.files).sort().join(', ')}`,
        ].join('\n'),
      );
    }
    setExit(0);
  });
}
