/** Builds the configured agent backend, once per process, from the runner's own environment. */
import { AnthropicBackend, ExecBackend, OpenAIBackend, ScriptBackend, type AgentBackend } from '@stageflow/agents';
import { parseAgentSpec, type AgentSpec } from '@stageflow/runtime';

/** Splits an exec command line on whitespace, honouring simple single and double quotes. */
export function splitCommand(command: string): string[] {
  const parts = command.match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
  return parts.map((p) => (/^(["']).*\1$/.test(p) ? p.slice(1, -1) : p));
}

/** The backend of `spec`, or else of `$SF_AGENT` (the same default for `sf serve` and the embedded default). */
export async function createBackend(given: AgentSpec | undefined, env: NodeJS.ProcessEnv = process.env): Promise<AgentBackend> {
  const spec = given ?? (env.SF_AGENT ? parseAgentSpec(env.SF_AGENT) : undefined);
  if (!spec) throw new Error('this agent-runner has no agent backend configured: pass --agent or set SF_AGENT');
  switch (spec.kind) {
    case 'script':
      return ScriptBackend.fromFile(spec.file);
    case 'openai':
      return new OpenAIBackend({ env });
    case 'anthropic':
      return new AnthropicBackend({ env });
    case 'exec': {
      const stopHook = stopHookOf(env);
      return new ExecBackend({
        command: splitCommand(spec.command),
        passEnv: (env.SF_EXEC_PASS_ENV ?? '').split(',').map((s) => s.trim()).filter(Boolean),
        ...(stopHook ? { stopHook } : {}),
        ...(env.SF_BIN ? { sfBin: env.SF_BIN } : {}),
        network: execNetworkOf(env),
      });
    }
    default: {
      const unreachable: never = spec;
      throw new Error(`unknown agent ${String(unreachable)}`);
    }
  }
}

/** `SF_EXEC_NETWORK=on` gives the exec CLI a sandboxed network every turn (to reach its model); default off. */
function execNetworkOf(env: NodeJS.ProcessEnv): boolean {
  const value = env.SF_EXEC_NETWORK?.trim() || 'off';
  if (value === 'on' || value === 'off') return value === 'on';
  throw new Error(`SF_EXEC_NETWORK=${value}: expected on or off`);
}

/** `SF_EXEC_STOP_HOOK=claude` installs the Stop hook for Claude Code; anything else is refused. */
function stopHookOf(env: NodeJS.ProcessEnv): 'claude' | undefined {
  const value = env.SF_EXEC_STOP_HOOK?.trim();
  if (!value) return undefined;
  if (value === 'claude') return value;
  throw new Error(`SF_EXEC_STOP_HOOK=${value}: the only supported stop hook is claude`);
}
