import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadBundle } from '@stageflow/api';
import { loadPipeline } from '@stageflow/catalog';
import { bundlePipeline } from './bundle';

const PROJECT = path.resolve(__dirname, '../../../catalog/test/fixtures/project');

describe('bundlePipeline', () => {
  it('carries the pipeline, its uses: stage files and the stageflow.yaml, relative to the project root', () => {
    const { bundle } = bundlePipeline(path.join(PROJECT, 'pipelines/good.pipeline.yaml'));
    expect(bundle.entry).toBe('pipelines/good.pipeline.yaml');
    expect(Object.keys(bundle.files).sort()).toEqual(['pipelines/good.pipeline.yaml', 'pipelines/stages/implement.yaml', 'pipelines/stages/plan.yaml', 'stageflow.yaml']);
    expect(bundle.files['pipelines/stages/plan.yaml']).toBe(fs.readFileSync(path.join(PROJECT, 'pipelines/stages/plan.yaml'), 'utf8'));
  });

  it('loads on the other side into the pipeline the files on disk load into', () => {
    for (const name of ['good', 'global-model']) {
      const file = path.join(PROJECT, `pipelines/${name}.pipeline.yaml`);
      const local = loadPipeline(file).pipeline!;
      const remote = loadBundle(bundlePipeline(file).bundle);
      const strip = (p: typeof local) => p.stages.map(({ source: _source, ...rest }) => rest);
      expect(strip(remote)).toEqual(strip(local));
      expect(remote.id).toBe(local.id);
    }
    expect(loadBundle(bundlePipeline(path.join(PROJECT, 'pipelines/global-model.pipeline.yaml')).bundle).stages[0].model).toBe('test/global-model');
  });

  it('bundles the same bytes from any working directory', () => {
    const file = path.join(PROJECT, 'pipelines/good.pipeline.yaml');
    const here = bundlePipeline(file).bundle;
    const cwd = process.cwd();
    try {
      process.chdir(os.tmpdir());
      expect(bundlePipeline(path.relative(os.tmpdir(), file)).bundle).toEqual(here);
    } finally {
      process.chdir(cwd);
    }
  });

  it('refuses an invalid pipeline before anything is sent', () => {
    expect(() => bundlePipeline(path.join(PROJECT, 'pipelines/escape.pipeline.yaml'))).toThrow(/pipeline\.uses_outside_project/);
  });
});
