/** Test support (not used by production code): stages, temp run dirs, hosts. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { StageDefinition } from '@stageflow/domain';
import { ToolHost, type ToolHostOptions } from '../tools/host';

export function makeStage(overrides: Partial<StageDefinition> = {}): StageDefinition {
  return {
    id: 'build',
    system_prompt: 'Build it.',
    model: 'openai/test-model',
    io: { input: { schema: { type: 'object' } }, output: { schema: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } } } },
    verify: [],
    gate_kinds: [],
    entry: true,
    route: [],
    replay_safe: true,
    ...overrides,
  };
}

export function requiredOnly(schema: { readonly [k: string]: unknown }, value: unknown): string | null {
  const missing = ((schema.required as string[] | undefined) ?? []).filter((k) => !(k in (value as object)));
  return missing.length ? `/ is missing required property ${missing.join(', ')}` : null;
}

export interface TempRun {
  readonly root: string;
  readonly runDir: string;
  readonly checkout: string;
  cleanup(): void;
}

export function tempRun(): TempRun {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sf-agents-')));
  const runDir = path.join(root, 'run');
  const checkout = path.join(root, 'checkout');
  fs.mkdirSync(runDir);
  fs.mkdirSync(checkout);
  return { root, runDir, checkout, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

export function makeHost(run: TempRun, overrides: Partial<ToolHostOptions> = {}): ToolHost {
  return new ToolHost({
    runId: 'run-1',
    runDir: run.runDir,
    stage: makeStage(),
    attempt: 1,
    checkout: run.checkout,
    validatePayload: requiredOnly,
    exchanges: [],
    ...overrides,
  });
}

export const goodEmit = { status: 'success', summary: 'done', artifacts: [], payload: { ok: true } };
