import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { validateText } from '../test/validateText';
import { validateCommand } from './validateCommand';

const STAGE = `  - id: a
    system_prompt: Work.
    model: m
    io:
      input: { schema: { type: object } }
      output: { schema: { type: object } }`;

function pipeline(stageExtra: string, checkExtra = ''): string {
  return `id: p\nstages:\n${STAGE}\n${stageExtra}    verify:\n      - { id: tests, type: command, run: npm test${checkExtra} }\n`;
}

describe('network: true', () => {
  it('is accepted on a stage body and on a command check, and resolved into the definition', () => {
    const result = validateText(pipeline('    network: true\n', ', network: true'));
    expect(result.errors).toEqual([]);
    expect(result.pipeline?.stages[0]).toMatchObject({ network: true, verify: [{ id: 'tests', network: true }] });
  });

  it('is absent (no network) unless written', () => {
    const result = validateText(pipeline(''));
    expect(result.pipeline?.stages[0]?.network).toBeUndefined();
    expect(result.pipeline?.stages[0]?.verify[0]).not.toHaveProperty('network');
  });

  it('refuses a non-boolean with a typed error naming the file and path', () => {
    const stage = validateText(pipeline('    network: "yes"\n')).errors;
    expect(stage).toEqual([expect.objectContaining({ code: 'stage.invalid_network', path: 'stages[0].network' })]);
    const check = validateText(pipeline('', ', network: 1')).errors;
    expect(check).toEqual([expect.objectContaining({ code: 'pipeline.invalid_verify', path: 'stages[0].verify[0].network' })]);
    expect(check[0]!.file).toBeTruthy();
  });

  it('still refuses unknown keys next to it', () => {
    expect(validateText(pipeline('', ', network: true, netwrk: true')).errors.map((e) => e.code)).toEqual(['pipeline.invalid_verify']);
  });

  it('is listed by sf validate --json', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'network-validate-'));
    try {
      const file = path.join(dir, 'p.pipeline.yaml');
      fs.writeFileSync(file, pipeline('    network: true\n', ', network: true'));
      const out = validateCommand(file, { json: true, strict: false });
      expect(JSON.parse(out.stdout)).toMatchObject({ ok: true, network: [{ stage: 'a' }, { stage: 'a', check: 'tests' }] });
      expect(validateCommand(file, { json: false, strict: false }).stdout).toContain('network: a (agent), a check tests');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
