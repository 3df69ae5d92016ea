import { readModelSchema } from '../database';

describe('readModelSchema', () => {
  it('keeps stageflow for the default namespace and gives every other namespace its own schema', () => {
    expect(readModelSchema('sf')).toBe('stageflow');
    expect(readModelSchema('e2eAB12')).toBe('stageflow_e2eab12');
    expect(readModelSchema('team1')).not.toBe(readModelSchema('team2'));
  });
});
