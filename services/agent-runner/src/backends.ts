/** Builds the configured agent backend, once per process. */
import { ScriptBackend, type AgentBackend } from '@stageflow/agents';
import type { AgentSpec } from './agent-spec';

export async function createBackend(spec: AgentSpec | undefined): Promise<AgentBackend> {
  if (!spec) throw new Error('this agent-runner has no agent backend configured: pass --agent or set SF_AGENT');
  switch (spec.kind) {
    case 'script':
      return ScriptBackend.fromFile(spec.file);
    case 'openai':
    case 'anthropic':
    case 'exec':
      throw new Error(`agent backend ${spec.kind} is not wired yet`);
    default: {
      const unreachable: never = spec;
      throw new Error(`unknown agent ${String(unreachable)}`);
    }
  }
}
