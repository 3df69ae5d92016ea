/**
 * The agent side of the tool server: what `sf stage emit|artifact|ask|check` runs inside an
 * exec agent's shell. Guarantees: never throws — every failure is an exit code with a message;
 * exit 0 = tool succeeded, 1 = tool error or unreachable server, 2 = parked on an operator
 * question (end the turn).
 */
export const STAGE_VERBS = { emit: 'emit_stage_envelope', artifact: 'write_stage_artifact', ask: 'ask_operator', check: 'check_outputs' } as const;
export type StageVerb = keyof typeof STAGE_VERBS;

export interface StageCommandResult {
  readonly exitCode: 0 | 1 | 2;
  readonly output: string;
}

export async function stageToolCommand(verb: StageVerb, argsJson: string, env: NodeJS.ProcessEnv = process.env): Promise<StageCommandResult> {
  const url = env.SF_TOOL_URL;
  const token = env.SF_TOOL_TOKEN;
  if (!url || !token) return { exitCode: 1, output: 'sf stage: SF_TOOL_URL and SF_TOOL_TOKEN are not set (run inside a stage agent session)' };
  try {
    const response = await fetch(`${url}/tools/${STAGE_VERBS[verb]}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: argsJson || '{}',
    });
    const body = (await response.json()) as { content?: string; isError?: boolean; parked?: boolean; error?: string };
    if (!response.ok) return { exitCode: 1, output: `sf stage ${verb}: ${body.error ?? response.status}` };
    return { exitCode: body.parked ? 2 : body.isError ? 1 : 0, output: body.content ?? '' };
  } catch (err) {
    return { exitCode: 1, output: `sf stage ${verb}: cannot reach the tool server: ${(err as Error).message}` };
  }
}
