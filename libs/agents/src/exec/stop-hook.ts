import { postToolServer } from './tool-client';

/**
 * The Stop hook of 003_*, for agent CLIs that support one (stdin: the CLI's JSON payload; stdout:
 * the decision). Guarantees:
 *  - blocks at most once per turn: `stop_hook_active: true` → no decision, whatever the outputs;
 *    the tool server also refuses a second block in the same turn;
 *  - fails open: unreadable/malformed stdin, a missing SF_TOOL_SOCKET/SF_TOOL_TOKEN, an unreachable
 *    server or any error → no decision (empty output);
 *  - decides nothing: it only asks the tool server's self-check; the verifier's after-phase
 *    checks stay the authority and read nothing the hook wrote.
 * Returns the text to print: '' (no decision) or {"decision":"block","reason":...}.
 */
export async function stopHook(stdin: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 30_000): Promise<string> {
  try {
    const payload: unknown = JSON.parse(stdin);
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return '';
    const active = (payload as { stop_hook_active?: unknown }).stop_hook_active;
    if (active !== undefined && typeof active !== 'boolean') return '';
    if (active === true) return '';
    const socket = env.SF_TOOL_SOCKET;
    const token = env.SF_TOOL_TOKEN;
    if (!socket || !token) return '';
    const response = await postToolServer(socket, token, '/hook/stop', '{}', timeoutMs);
    if (response.status !== 200) return '';
    const decision = response.json as { block?: unknown; reason?: unknown };
    if (decision.block !== true || typeof decision.reason !== 'string') return '';
    return JSON.stringify({
      decision: 'block',
      reason: `Required outputs are not complete yet: ${decision.reason}\nWrite them (or emit status failure) before ending your turn. The verifier checks again after your turn either way.`,
    });
  } catch {
    return '';
  }
}
