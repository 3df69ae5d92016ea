import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InvalidCommand, subjects, type InlinePipelineBundle, type RunRequestRejected } from '@stageflow/domain';
import { loadConfig, openInfrastructure, type Infrastructure } from '@stageflow/runtime';
import { MAX_BODY_DEPTH, refuseDeepBody } from './body-limits';
import { problemOf } from './errors.filter';
import { RunRequests } from './run-requests';

const bundle: InlinePipelineBundle = {
  entry: 'p.pipeline.yaml',
  files: {
    'p.pipeline.yaml': 'id: p\nmodel: script/x\nstages:\n  - id: a\n    entry: true\n    system_prompt: Go.\n    io:\n      input: { schema: { type: object } }\n      output: { schema: { type: object } }\n',
  },
};

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('run requests past the input bounds (bus and REST share RunRequests)', () => {
  let home: string;
  let infra: Infrastructure;
  let requests: RunRequests;
  beforeEach(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-input-bounds-'));
    infra = await openInfrastructure(loadConfig({ STAGEFLOW_HOME: home }));
    requests = new RunRequests(infra);
  });
  afterEach(async () => {
    await infra.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it.each([
    ['nested 8,000 levels deep', () => nested(8000), 'input.too_deep'],
    ['over 1 MiB', () => ({ text: 'x'.repeat(1024 * 1024 + 1) }), 'input.too_large'],
  ])('answers an input %s with {accepted: false, code} and records the rejection', async (_name, input, code) => {
    const reply = await requests.accept({ pipeline: { inline: bundle }, input: input() }, 'key-1', { by: 'bus' });
    expect(reply).toMatchObject({ accepted: false, code });
    const rejected = await infra.log.readSubject<RunRequestRejected>(subjects(infra.config.namespace).runRejections);
    expect(rejected.messages.map((m) => m.data.code)).toEqual([code]);
  });

  it('accepts an input at the bound', async () => {
    expect(await requests.accept({ pipeline: { inline: bundle }, input: nested(63) }, undefined, { by: 'bus' })).toMatchObject({ accepted: true });
  });
});

describe('REST answers for the input bounds', () => {
  const respond = (body: unknown) => {
    const sent: { status?: number; body?: unknown; next: boolean } = { next: false };
    refuseDeepBody({ headers: {}, body }, { headersSent: false, status: (code) => ({ json: (b) => Object.assign(sent, { status: code, body: b }) }) }, () => (sent.next = true));
    return sent;
  };

  it('refuses a parsed body deeper than the bound with 400 input.too_deep before any route', () => {
    expect(respond({ input: nested(8000) })).toMatchObject({ status: 400, body: { error: 'input.too_deep' }, next: false });
    expect(respond({ input: nested(MAX_BODY_DEPTH - 2) })).toMatchObject({ next: true });
  });

  it('maps input.too_large to 413 and input.too_deep to 400', () => {
    expect(problemOf(new InvalidCommand('input.too_large', 'big'))).toMatchObject({ status: 413, error: 'input.too_large' });
    expect(problemOf(new InvalidCommand('input.too_deep', 'deep'))).toMatchObject({ status: 400, error: 'input.too_deep' });
  });
});
