/**
 * ToolServer: exposes one attempt's ToolHost over HTTP on a Unix socket for an external agent CLI
 * (`sf stage emit|artifact|ask|check`, and the stop hook). The socket lives alone in a fresh
 * directory, which the exec backend binds into the agent's sandbox; no TCP port is opened.
 *
 *   POST /tools/<name>   body: the tool's JSON arguments  → { content, isError, parked? }
 *   POST /hook/stop      → { block: boolean, reason? }
 *
 * Guarantees: every request must carry `Authorization: Bearer <token>` (a fresh random token,
 * compared in constant time) — anything else is 401; bodies are capped at 4 MiB; only the host's
 * offered tools are reachable; /hook/stop blocks at most once per turn (`beginTurn` resets it)
 * and only when the self-check exists, ran, and reported missing outputs.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ToolHost } from '../tools/host';

export const TOOL_SOCKET_NAME = 'tool.sock';

export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export class ToolServer {
  readonly token = randomBytes(32).toString('hex');
  private server?: http.Server;
  private blockedThisTurn = false;
  /** The directory holding only the socket (bound into the sandbox); set by `start`. */
  socketDir?: string;

  constructor(private readonly host: ToolHost) {}

  /** Starts listening; returns SF_TOOL_SOCKET (this host's path) and SF_TOOL_TOKEN for the agent's environment. */
  async start(): Promise<{ SF_TOOL_SOCKET: string; SF_TOOL_TOKEN: string }> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sf-tools-'));
    this.socketDir = dir;
    const socket = path.join(dir, TOOL_SOCKET_NAME);
    const server = http.createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socket, resolve));
    return { SF_TOOL_SOCKET: socket, SF_TOOL_TOKEN: this.token };
  }

  /** A new agent turn: the stop hook may block once again. */
  beginTurn(): void {
    this.blockedThisTurn = false;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.socketDir) await fs.rm(this.socketDir, { recursive: true, force: true });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    try {
      if (!this.authorized(req.headers.authorization)) return reply(401, { error: 'missing or invalid bearer token' });
      if (req.method !== 'POST') return reply(405, { error: 'POST only' });
      const body = await readBody(req);
      if (body === null) return reply(413, { error: `body larger than ${MAX_BODY_BYTES} bytes` });
      const url = req.url ?? '';
      if (url === '/hook/stop') return reply(200, await this.stopDecision());
      const match = /^\/tools\/([a-z_]+)$/.exec(url);
      if (!match) return reply(404, { error: `no route ${url}` });
      let args: unknown = {};
      if (body.trim()) {
        try {
          args = JSON.parse(body);
        } catch {
          args = body; // the host answers with a precise "not valid JSON" error
        }
      }
      return reply(200, await this.host.call(match[1]!, args));
    } catch (err) {
      return reply(500, { error: (err as Error).message });
    }
  }

  private async stopDecision(): Promise<{ block: boolean; reason?: string }> {
    const selfCheck = this.host.options.selfCheck;
    if (this.blockedThisTurn || !selfCheck || this.host.shouldStop) return { block: false };
    const result = await selfCheck();
    if (result.ok) return { block: false };
    this.blockedThisTurn = true;
    return { block: true, reason: result.report };
  }

  private authorized(header: string | undefined): boolean {
    const given = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7) : '');
    const expected = Buffer.from(this.token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

function readBody(req: http.IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
