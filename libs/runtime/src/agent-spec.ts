/**
 * Which agent backend an agent-runner uses: part of the runner's own configuration
 * (`--agent` / `SF_AGENT`), never of a run request.
 *   script:<file>     the deterministic script agent (tests, demos, benchmarks)
 *   openai            an OpenAI-compatible chat-completions endpoint (SF_OPENAI_BASE_URL, OPENAI_API_KEY)
 *   anthropic         the Anthropic Messages API (ANTHROPIC_API_KEY, SF_ANTHROPIC_BASE_URL)
 *   exec:<command>    an external agent CLI run in the checkout
 */
import * as path from 'node:path';

export type AgentSpec =
  | { readonly kind: 'script'; readonly file: string }
  | { readonly kind: 'openai' }
  | { readonly kind: 'anthropic' }
  | { readonly kind: 'exec'; readonly command: string };

export class AgentSpecError extends Error {
  readonly retryable = false;
}

export function parseAgentSpec(text: string): AgentSpec {
  const colon = text.indexOf(':');
  const kind = colon < 0 ? text : text.slice(0, colon);
  const rest = colon < 0 ? '' : text.slice(colon + 1);
  switch (kind) {
    case 'script':
      if (!rest) throw new AgentSpecError('--agent script:<file> needs the script file');
      return { kind: 'script', file: path.resolve(rest) };
    case 'openai':
    case 'anthropic':
      return { kind };
    case 'exec':
      if (!rest) throw new AgentSpecError('--agent exec:<command> needs the command');
      return { kind: 'exec', command: rest };
    default:
      throw new AgentSpecError(`unknown agent ${JSON.stringify(text)}: script:<file>, openai, anthropic, or exec:<command>`);
  }
}
