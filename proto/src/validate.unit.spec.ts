/** The boundary validators: null for valid values, one readable line with a JSON pointer otherwise. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { validateEvent, validateRunRequest } from './index';

const example = (name: string) =>
  JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'examples', `${name}.json`), 'utf8')) as Record<string, unknown>;

describe('validateEvent', () => {
  it('accepts a valid event', () => {
    expect(validateEvent(example('StageFailed'))).toBeNull();
  });

  it('refuses non-objects and unknown types, naming the known ones', () => {
    expect(validateEvent('StageFailed')).toBe('RunEvent /: must be an object');
    expect(validateEvent({ ...example('RunSucceeded'), type: 'RunExploded' })).toMatch(
      /^RunEvent \/type: must be one of RunRequested, .*RunCancelled \(got "RunExploded"\)$/,
    );
  });

  it('names the pointer of a wrong value', () => {
    expect(validateEvent({ ...example('StageFailed'), kind: 'boom' })).toMatch(
      /^StageFailed \/kind: must be one of "agent", "verification", /,
    );
    expect(validateEvent({ ...example('StageFailed'), attempt: '3' })).toBe('StageFailed /attempt: must be number');
    expect(validateEvent({ ...example('StageFailed'), v: 2 })).toBe('StageFailed /v: must be 1');
  });

  it('names missing and unknown properties, however deep', () => {
    const { reason: _reason, ...noReason } = example('StageFailed');
    expect(validateEvent(noReason)).toBe('StageFailed /reason: is required');
    const captured = example('EnvelopeCaptured');
    const envelope = { ...(captured.envelope as object), colour: 'green' };
    expect(validateEvent({ ...captured, envelope })).toBe('EnvelopeCaptured /envelope/colour: is not allowed here');
  });

  it('reports inside the closest union branch', () => {
    const requested = example('RunRequested');
    expect(validateEvent({ ...requested, checkout: { kind: 'git', url: 'https://x/y.git' } })).toBe(
      'RunRequested /checkout/ref: is required',
    );
    const verify = [{ id: 't', type: 'command', when: ['after'], run: 7 }];
    const pipeline = requested.pipeline as { stages: object[] };
    const stages = [{ ...pipeline.stages[0], verify }];
    expect(validateEvent({ ...requested, pipeline: { ...pipeline, stages } })).toBe(
      'RunRequested /pipeline/stages/0/verify/0/run: must be string',
    );
  });

  it('lists the discriminator values when no union branch matches', () => {
    expect(validateEvent({ ...example('RunRequested'), checkout: { kind: 'svn' } })).toBe(
      'RunRequested /checkout/kind: must be one of "fresh", "path", "git"',
    );
  });
});

describe('validateRunRequest', () => {
  it('accepts inline and by-reference requests', () => {
    expect(validateRunRequest(example('RunRequestCommand'))).toBeNull();
    expect(validateRunRequest(example('RunRequestCommand.ref'))).toBeNull();
    expect(validateRunRequest({ pipeline: { ref: { id: 'hello' } } })).toBeNull();
  });

  it('refuses what the contract does not allow', () => {
    expect(validateRunRequest({})).toBe('RunRequestCommand /pipeline: is required');
    expect(validateRunRequest({ pipeline: { ref: { id: 'x' } }, labels: { n: 1 } })).toBe(
      'RunRequestCommand /labels/n: must be string',
    );
    expect(validateRunRequest({ pipeline: { ref: { id: 'x' } }, requestedBy: 'me' })).toBe(
      'RunRequestCommand /requestedBy: is not allowed here',
    );
    expect(validateRunRequest(null)).toBe('RunRequestCommand /: must be object');
  });
});
