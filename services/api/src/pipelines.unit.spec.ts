import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { subjects, type InlinePipelineBundle, type RunRequestRejected } from '@stageflow/domain';
import { loadConfig, openInfrastructure, type Infrastructure } from '@stageflow/runtime';
import { bundleDigest, PublishedPipelines } from './pipelines';
import { RunRequests } from './run-requests';

const PIPELINE = `id: greet
model: script/x
stages:
  - id: hello
    uses: stages/hello.yaml
    entry: true
`;
const stage = (prompt: string) => `system_prompt: ${prompt}
io:
  input: { schema: { type: object } }
  output: { schema: { type: object } }
`;
const bundle = (prompt = 'Say hello.'): InlinePipelineBundle => ({ entry: 'greet.pipeline.yaml', files: { 'greet.pipeline.yaml': PIPELINE, 'stages/hello.yaml': stage(prompt) } });

describe('published pipelines (embedded log)', () => {
  let infra: Infrastructure;
  let pipelines: PublishedPipelines;
  let home: string;

  beforeEach(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-pipelines-'));
    infra = await openInfrastructure(loadConfig({ STAGEFLOW_HOME: home }));
    pipelines = new PublishedPipelines(infra.log, infra.config.namespace);
  });
  afterEach(async () => {
    await infra.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('gives the same content the same version and new content the next one', async () => {
    const first = await pipelines.publish(bundle(), 'me');
    expect(first).toEqual({ id: 'greet', version: '1', digest: bundleDigest(bundle()), created: true });
    expect(await pipelines.publish({ entry: 'greet.pipeline.yaml', files: { 'stages/hello.yaml': stage('Say hello.'), 'greet.pipeline.yaml': PIPELINE } }, 'you')).toEqual({ ...first, created: false });
    const second = await pipelines.publish(bundle('Say hi.'), 'me');
    expect(second).toMatchObject({ id: 'greet', version: '2', created: true });
    expect(second.digest).not.toBe(first.digest);
    expect(await pipelines.publish(bundle(), 'me')).toEqual({ ...first, created: false });
    expect((await infra.log.readSubject(pipelines.subject('greet'))).messages).toHaveLength(2);
    expect(await pipelines.list()).toEqual([{ id: 'greet', latest_version: '2', digest: second.digest, versions: 2, published_at: expect.any(String) }]);
  });

  it('numbers concurrent publications of different content without a gap or a repeat', async () => {
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((p) => pipelines.publish(bundle(`Say ${p}.`), 'me')));
    expect(results.map((r) => r.version).sort()).toEqual(['1', '2', '3', '4']);
  });

  it('resolves the latest version, a numbered one, or one named by its digest; anything else is pipeline.unknown', async () => {
    const v1 = await pipelines.publish(bundle(), 'me');
    await pipelines.publish(bundle('Say hi.'), 'me');
    expect((await pipelines.resolve({ id: 'greet' })).stages[0].system_prompt).toContain('Say hi.');
    expect((await pipelines.resolve({ id: 'greet', version: '1' })).stages[0].system_prompt).toContain('Say hello.');
    expect((await pipelines.resolve({ id: 'greet', version: v1.digest })).stages[0].system_prompt).toContain('Say hello.');
    expect(await pipelines.show({ id: 'greet', version: '1' })).toMatchObject({ id: 'greet', version: '1', latest: false, stages: ['hello'], published_by: 'me' });
    for (const ref of [{ id: 'nope' }, { id: 'greet', version: '3' }, { id: 'greet', version: 'sha256:00' }, { id: 'not a.token' }]) {
      await expect(pipelines.resolve(ref)).rejects.toMatchObject({ code: 'pipeline.unknown' });
    }
  });

  it('refuses an invalid pipeline and an id that is not one subject token, storing nothing', async () => {
    await expect(pipelines.publish({ entry: 'greet.pipeline.yaml', files: { 'greet.pipeline.yaml': PIPELINE } }, 'me')).rejects.toMatchObject({ code: 'pipeline.invalid' });
    await expect(pipelines.publish({ entry: 'p.pipeline.yaml', files: { 'p.pipeline.yaml': PIPELINE.replace('id: greet', 'id: my.greet'), 'stages/hello.yaml': stage('x') } }, 'me')).rejects.toEqual(expect.objectContaining({ code: 'pipeline.id_not_publishable' }));
    expect(await pipelines.list()).toEqual([]);
  });

  it('a run request by reference starts a run of that version; an unknown reference is a recorded typed rejection', async () => {
    await pipelines.publish(bundle(), 'me');
    const requests = new RunRequests(infra, pipelines);
    const accepted = await requests.accept({ pipeline: { ref: { id: 'greet', version: '1' } } }, 'key-1', { by: 'test' });
    expect(accepted).toMatchObject({ accepted: true, duplicate: false });
    if (!accepted.accepted) throw new Error('refused');
    expect((await infra.runs.load(accepted.run_id)).state.pipeline.id).toBe('greet');
    expect(await requests.accept({ pipeline: { ref: { id: 'greet', version: '7' } } }, 'key-2', { by: 'test' })).toMatchObject({ accepted: false, code: 'pipeline.unknown' });
    const rejected = await infra.log.readSubject<RunRequestRejected>(subjects(infra.config.namespace).runRejections);
    expect(rejected.messages.map((m) => m.data)).toEqual([expect.objectContaining({ type: 'RunRequestRejected', code: 'pipeline.unknown', idempotencyKey: 'key-2' })]);
  });
});
