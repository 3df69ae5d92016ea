/**
 * The agent side of the tool server: what `sf stage emit|artifact|ask|check` runs inside an
 * exec agent's sandbox, over the Unix socket named by SF_TOOL_SOCKET. Guarantees: never throws —
 * every failure is an exit code with a message; exit 0 = tool succeeded, 1 = tool error or
 * unreachable server, 2 = parked on an operator question (end the turn).
 */
import * as http from 'node:http';

export const STAGE_VERBS = { emit: 'emit_stage_envelope', artifact: 'write_stage_artifact', ask: 'ask_operator', check: 'check_outputs' } as const;
export type StageVerb = keyof typeof STAGE_VERBS;

export interface StageCommandResult {
  readonly exitCode: 0 | 1 | 2;
  readonly output: string;
}

/** POSTs `body` to `route` of the tool server at `socketPath`; resolves with the status and parsed JSON. */
export function postToolServer(socketPath: string, token: string, route: string, body: string, timeoutMs = 0): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { socketPath, path: route, method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}) },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => {
          try {
            resolve({ status: response.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
          } catch (error) {
            reject(error);
          }
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('tool server timed out')));
    request.on('error', reject);
    request.end(body);
  });
}

export async function stageToolCommand(verb: StageVerb, argsJson: string, env: NodeJS.ProcessEnv = process.env): Promise<StageCommandResult> {
  const socket = env.SF_TOOL_SOCKET;
  const token = env.SF_TOOL_TOKEN;
  if (!socket || !token) return { exitCode: 1, output: 'sf stage: SF_TOOL_SOCKET and SF_TOOL_TOKEN are not set (run inside a stage agent session)' };
  try {
    const { status, json } = await postToolServer(socket, token, `/tools/${STAGE_VERBS[verb]}`, argsJson || '{}');
    const body = json as { content?: string; isError?: boolean; parked?: boolean; error?: string };
    if (status !== 200) return { exitCode: 1, output: `sf stage ${verb}: ${body.error ?? status}` };
    return { exitCode: body.parked ? 2 : body.isError ? 1 : 0, output: body.content ?? '' };
  } catch (err) {
    return { exitCode: 1, output: `sf stage ${verb}: cannot reach the tool server: ${(err as Error).message}` };
  }
}
