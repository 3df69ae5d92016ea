/**
 * Every API route (enumerated from the controllers) × no token / a wrong token / a token without
 * the route's scope / a token with it, on the API module in this process (embedded log, read
 * models in the test Postgres). Also: MCP tools per scope, the token's name as the recorded
 * operator, and no part of a token in a log line or an event.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RequestMethod, type Type } from '@nestjs/common';
import { sql } from 'kysely';
import { HealthController, startService, type ServiceApp } from '@stageflow/messaging';
import { createDb, migrateToLatest, quoteIdent, type Projector } from '@stageflow/readmodels';
import { createLogger, loadConfig, openInfrastructure, type Infrastructure } from '@stageflow/runtime';
import { ApiModule } from './api.module';
import { ROUTE_ACCESS, type RouteAccess } from './auth.guard';
import type { ReadModels } from './read-models';

jest.setTimeout(60_000);

const secret = (name: string) => `${name}-${randomBytes(12).toString('hex')}`;
const TOKENS = { reader: secret('rd'), operator: secret('op'), publisher: secret('pb'), root: secret('ad') };

const BUNDLE = {
  entry: 'p.pipeline.yaml',
  files: {
    'p.pipeline.yaml': 'id: p\nmodel: script/x\nstages:\n  - id: a\n    entry: true\n    system_prompt: Go.\n    io:\n      input: { schema: { type: object } }\n      output: { schema: { type: object } }\n',
  },
};

type Access = 'read' | 'operate' | 'publish' | 'token' | 'public';
interface RouteCase {
  readonly access: Access;
  readonly path: string;
  readonly method?: string;
  readonly body?: unknown;
}

/** Every route the API serves, with what it needs and a request to send it. */
const ROUTES: Readonly<Record<string, RouteCase>> = {
  'GET /api/runs': { access: 'read', path: '/api/runs' },
  'POST /api/runs': { access: 'publish', path: '/api/runs', body: { pipeline: { inline: BUNDLE } } },
  'GET /api/runs/:runId': { access: 'read', path: '/api/runs/run_unknown' },
  'GET /api/runs/:runId/stages/:stageId/verification': { access: 'read', path: '/api/runs/run_unknown/stages/a/verification' },
  'GET /api/runs/:runId/stages/:stageId/envelope': { access: 'read', path: '/api/runs/run_unknown/stages/a/envelope' },
  'POST /api/runs/:runId/stages/:stageId/recovery': { access: 'operate', path: '/api/runs/run_unknown/stages/a/recovery', body: { guidance: 'again' } },
  'POST /api/runs/:runId/stages/:stageId/recovery/stop': { access: 'operate', path: '/api/runs/run_unknown/stages/a/recovery/stop', body: {} },
  'POST /api/runs/:runId/stages/:stageId/answer': { access: 'operate', path: '/api/runs/run_unknown/stages/a/answer', body: { decision: 'accept' } },
  'POST /api/runs/:runId/stages/:stageId/feedback-decision': { access: 'operate', path: '/api/runs/run_unknown/stages/a/feedback-decision', body: { decision: 'extend' } },
  'POST /api/runs/:runId/stages/:stageId/retry': { access: 'operate', path: '/api/runs/run_unknown/stages/a/retry', body: {} },
  'POST /api/runs/:runId/cancel': { access: 'operate', path: '/api/runs/run_unknown/cancel', body: {} },
  'GET /api/runs/:runId/events': { access: 'read', path: '/api/runs/run_unknown/events' },
  'POST /api/pipelines': { access: 'publish', path: '/api/pipelines', body: BUNDLE },
  'GET /api/pipelines': { access: 'read', path: '/api/pipelines' },
  'GET /api/pipelines/:id': { access: 'read', path: '/api/pipelines/unknown' },
  'POST /mcp': { access: 'token', path: '/mcp', body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } },
  'ALL /mcp': { access: 'token', path: '/mcp', method: 'GET' },
  'GET /metrics': { access: 'public', path: '/metrics' },
  'GET /healthz': { access: 'public', path: '/healthz' },
  'GET /readyz': { access: 'public', path: '/readyz' },
};

/** `METHOD /path` of every handler of these controllers, from their Nest metadata. */
function routesOf(controllers: readonly Type<unknown>[]): Map<string, { controller: Type<unknown>; handler: string }> {
  const routes = new Map<string, { controller: Type<unknown>; handler: string }>();
  const join = (...parts: string[]) => `/${parts.map((p) => p.replace(/^\/+|\/+$/g, '')).filter(Boolean).join('/')}`;
  for (const controller of controllers) {
    const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
    for (const handler of Object.getOwnPropertyNames(controller.prototype)) {
      const fn = controller.prototype[handler] as object;
      const method = Reflect.getMetadata(METHOD_METADATA, fn) as RequestMethod | undefined;
      if (method === undefined) continue;
      routes.set(`${RequestMethod[method]} ${join(base, String(Reflect.getMetadata(PATH_METADATA, fn) ?? ''))}`, { controller, handler });
    }
  }
  return routes;
}

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

describe('API tokens: every route × token and scope', () => {
  let home: string;
  let infra: Infrastructure;
  let readModels: ReadModels;
  let schema: string;
  let service: ServiceApp;
  let base: URL;
  const logged: string[] = [];
  const controllers = ApiModule.register({} as ReadModels).controllers as Type<unknown>[];

  /** A request with the Authorization header given as a latin1 string: each char is sent as one byte. */
  const send = (method: string, route: string, options: { authorization?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const body = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
      const request = http.request(
        {
          host: base.hostname,
          port: base.port,
          method,
          path: route,
          headers: {
            ...(options.authorization !== undefined ? { authorization: options.authorization } : {}),
            ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}),
            accept: 'application/json, text/event-stream',
            ...options.headers,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: Record<string, unknown> = {};
            try {
              parsed = JSON.parse(text) as Record<string, unknown>;
            } catch {
              parsed = { text };
            }
            resolve({ status: response.statusCode ?? 0, body: parsed });
          });
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  const bearer = (token: string) => `Bearer ${token}`;
  const withToken = (name: keyof typeof TOKENS) => bearer(TOKENS[name]);

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-api-auth-'));
    const config = loadConfig({
      STAGEFLOW_HOME: home,
      SF_API_TOKENS: `reader:read:${TOKENS.reader},operator:operate:${TOKENS.operator},publisher:publish:${TOKENS.publisher},root:admin:${TOKENS.root}`,
    });
    infra = await openInfrastructure(config);
    // The routes' read models in a schema of their own; nothing here depends on projection.
    schema = `api_auth_${randomBytes(6).toString('hex')}`;
    const db = createDb(process.env.SF_TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', { schema, maxConnections: 2 });
    await migrateToLatest(db);
    const projector = { lag: async () => 0, metrics: () => ({ checkpoint: 0, batches: 0, events: 0, errors: 0 }), stop: async () => undefined } as unknown as Projector;
    readModels = { db, projector, close: () => db.destroy() };
    const logger = createLogger({}, 'debug', (line) => logged.push(line));
    service = await startService({ name: 'api', module: ApiModule.register(readModels), infra, logger, port: 0 });
    base = new URL(service.url!);
  });
  afterAll(async () => {
    await service?.close();
    if (readModels) {
      await sql.raw(`drop schema if exists ${quoteIdent(schema)} cascade`).execute(readModels.db);
      await readModels.close();
    }
    await infra?.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('the table names exactly the routes the controllers serve, each declaring what the table says', () => {
    const served = routesOf([...controllers, HealthController]);
    expect([...served.keys()].sort()).toEqual(Object.keys(ROUTES).sort());
    for (const [route, { controller, handler }] of served) {
      if (controller === HealthController) continue;
      const fn = (controller.prototype as Record<string, object>)[handler];
      const access = (Reflect.getMetadata(ROUTE_ACCESS, fn) ?? Reflect.getMetadata(ROUTE_ACCESS, controller)) as RouteAccess | undefined;
      const declared = access?.kind === 'scope' ? access.scope : access?.kind;
      expect({ route, declared }).toEqual({ route, declared: ROUTES[route].access });
    }
  });

  const cases = Object.entries(ROUTES).map(([route, c]) => [route, c] as const);
  const lacking: Record<'read' | 'operate' | 'publish', keyof typeof TOKENS> = { read: 'operator', operate: 'reader', publish: 'reader' };
  const holding: Record<'read' | 'operate' | 'publish', keyof typeof TOKENS> = { read: 'reader', operate: 'operator', publish: 'publisher' };

  describe.each(cases)('%s', (_route, c) => {
    const call = (authorization?: string) => send(c.method ?? (c.body === undefined ? 'GET' : 'POST'), c.path, { ...(authorization !== undefined ? { authorization } : {}), ...(c.body !== undefined ? { body: c.body } : {}) });
    const authenticated = c.access !== 'public';

    it(authenticated ? 'no token → 401' : 'no token → served', async () => {
      const reply = await call();
      if (authenticated) expect(reply).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
      else expect(reply.status).toBe(200);
    });

    if (!authenticated) return;

    it.each([
      ['another token', () => bearer(secret('rd'))],
      ['a prefix of a real token', () => bearer(TOKENS.reader.slice(0, -1))],
      ['a real token with one more character', () => bearer(`${TOKENS.reader}x`)],
      ['the same length in characters but not in bytes', () => bearer(`é${TOKENS.reader.slice(1)}`)],
      ['a multibyte token (UTF-8 bytes)', () => bearer(Buffer.from(`ü${TOKENS.reader.slice(1)}`, 'utf8').toString('latin1'))],
      ['an empty bearer', () => 'Bearer '],
      ['another scheme', () => `Basic ${TOKENS.root}`],
    ])('%s → 401', async (_what, authorization) => {
      expect(await call(authorization())).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    });

    if (c.access !== 'token') {
      const scope = c.access;
      it(`a token without ${scope} → 403 naming the scope`, async () => {
        const reply = await call(withToken(lacking[scope]));
        expect(reply.status).toBe(403);
        expect(reply.body).toMatchObject({ error: 'forbidden', message: expect.stringContaining(`needs the ${scope} scope`) });
      });
    }

    it.each(c.access === 'token' ? (['reader', 'operator', 'publisher', 'root'] as const) : ([holding[c.access], 'root'] as const))('token %s (holds it) → served (not 401/403/500)', async (name) => {
      const reply = await call(withToken(name));
      expect([401, 403]).not.toContain(reply.status);
      expect(reply.status).toBeLessThan(500);
    });
  });

  describe('MCP tools need the scope of their REST route', () => {
    const tool = async (token: keyof typeof TOKENS, name: string, args: Record<string, unknown>) => {
      const reply = await send('POST', '/mcp', { authorization: withToken(token), body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } } });
      expect(reply.status).toBe(200);
      return (reply.body.result as { structuredContent: Record<string, unknown> }).structuredContent;
    };
    it.each([
      ['get_run', { runId: 'run_unknown' }, 'read'],
      ['get_stage_verification', { runId: 'run_unknown', stageId: 'a' }, 'read'],
      ['recover_manual_stage', { runId: 'run_unknown', stageId: 'a', guidance: 'again' }, 'operate'],
      ['stop_manual_recovery', { runId: 'run_unknown', stageId: 'a' }, 'operate'],
      ['decide_feedback_loop', { runId: 'run_unknown', stageId: 'a', decision: 'extend' }, 'operate'],
      ['answer_operator', { runId: 'run_unknown', stageId: 'a', answer: { decision: 'accept' } }, 'operate'],
    ] as const)('%s needs %s', async (name, args, scope) => {
      expect(await tool(lacking[scope], name, args)).toMatchObject({ status: 403, error: 'forbidden' });
      expect(await tool(holding[scope], name, args)).toMatchObject({ status: 404 });
      expect(await tool('root', name, args)).toMatchObject({ status: 404 });
    });
  });

  it("records the token's name as the operator and X-Stageflow-Operator only as a display note; no part of a token is logged or stored", async () => {
    const requested = await send('POST', '/api/runs', { authorization: withToken('publisher'), body: { pipeline: { inline: BUNDLE }, requested_by: 'deploy-bot' } });
    expect(requested).toMatchObject({ status: 202 });
    const runId = String(requested.body.run_id);
    const cancelled = await send('POST', `/api/runs/${runId}/cancel`, { authorization: withToken('operator'), body: { reason: 'test' }, headers: { 'x-stageflow-operator': 'root' } });
    expect(cancelled.status).toBe(200);
    const { events } = await infra.runs.load(runId);
    expect(events.find((e) => e.type === 'RunRequested')).toMatchObject({ requestedBy: 'api:publisher', claimedBy: 'deploy-bot' });
    expect(events.find((e) => e.type === 'RunCancelled')).toMatchObject({ by: 'api:operator', claimedBy: 'root' });

    const stored = JSON.stringify((await infra.log.read(`${infra.config.namespace}.>`)).map((m) => m.data));
    const lines = logged.join('\n');
    for (const token of Object.values(TOKENS)) {
      const part = token.slice(token.indexOf('-') + 1, token.indexOf('-') + 9);
      expect(stored).not.toContain(part);
      expect(lines).not.toContain(part);
    }
  });
});
