/** Test support: a scripted HTTP server on 127.0.0.1 standing in for a model provider. */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeReply {
  readonly status?: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

export interface FakeServer {
  readonly url: string;
  /** Parsed JSON bodies of every request received, in order. */
  readonly requests: { path: string; body: { [k: string]: unknown }; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** Serves `replies` in order (the last one repeats). */
export async function startFakeServer(replies: readonly FakeReply[]): Promise<FakeServer> {
  const requests: FakeServer['requests'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      requests.push({ path: req.url ?? '', body: text ? JSON.parse(text) : {}, headers: req.headers });
      const reply = replies[Math.min(requests.length, replies.length) - 1]!;
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

// OpenAI chat-completions replies.
export const oaText = (text: string): FakeReply => ({
  body: { id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: text } }] },
});
export const oaTools = (...calls: [string, string][]): FakeReply => ({
  body: {
    id: 'c',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: { role: 'assistant', content: null, tool_calls: calls.map(([name, args], i) => ({ id: `call_${name}_${i}`, type: 'function', function: { name, arguments: args } })) },
      },
    ],
  },
});

// Anthropic Messages replies.
export const anText = (text: string): FakeReply => ({
  body: { id: 'msg', type: 'message', role: 'assistant', model: 'm', stop_reason: 'end_turn', content: [{ type: 'text', text }], usage: { input_tokens: 1, output_tokens: 1 } },
});
export const anTools = (...calls: [string, unknown][]): FakeReply => ({
  body: {
    id: 'msg',
    type: 'message',
    role: 'assistant',
    model: 'm',
    stop_reason: 'tool_use',
    content: calls.map(([name, input], i) => ({ type: 'tool_use', id: `tu_${name}_${i}`, name, input })),
    usage: { input_tokens: 1, output_tokens: 1 },
  },
});

export const errorReply = (status: number, message: string, headers: Record<string, string> = {}): FakeReply => ({
  status,
  headers,
  body: { error: { message, type: status === 401 ? 'authentication_error' : 'rate_limit_error' }, type: 'error' },
});
