import * as path from 'node:path';
import type { Output } from '../output';
import { ApiClient } from './client';
import { runOnServer } from './run';

const PIPELINE = path.resolve(__dirname, '../../../../e2e/fixtures/cluster/release.pipeline.yaml');
const silent: Output = { out: () => undefined, err: () => undefined, isTTY: false };
const flags = { server: 'http://127.0.0.1:9', pipeline: PIPELINE, input: '{"release":"r"}', labels: {}, json: true, includeStages: false, detach: true };

describe('sf run --server before anything is sent', () => {
  it('refuses a {path} checkout: no pod sees this machine\'s files', async () => {
    await expect(runOnServer({ ...flags, checkout: { kind: 'path', path: '/srv/repo' } }, silent)).rejects.toThrow(/--checkout <dir> works only in the embedded default/);
  });

  it('needs a token and a URL', async () => {
    expect(() => ApiClient.fromEnv('http://127.0.0.1:9', {})).toThrow(/set SF_API_TOKEN/);
    expect(() => ApiClient.fromEnv('not a url', { SF_API_TOKEN: 't' })).toThrow(/is not a URL/);
  });

  it('names an unreachable API instead of crashing', async () => {
    const previous = process.env.SF_API_TOKEN;
    process.env.SF_API_TOKEN = 't';
    try {
      await expect(runOnServer({ ...flags, checkout: { kind: 'fresh' } }, silent)).rejects.toThrow(/cannot reach http:\/\/127\.0\.0\.1:9/);
    } finally {
      if (previous === undefined) delete process.env.SF_API_TOKEN;
      else process.env.SF_API_TOKEN = previous;
    }
  });
});
