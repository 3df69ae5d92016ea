/**
 * MCP over streamable HTTP at `/mcp`, behind the API's bearer auth: any valid token may connect,
 * each tool call needs its own scope (TOOL_SCOPES), and decisions are recorded `by: mcp:<token
 * name>`. Stateless: every POST gets a
 * fresh server and transport (no session to lose when a replica goes away), and the reply is one
 * JSON response. GET and DELETE (a session's stream and its end) are refused with 405.
 */
import { All, Controller, Inject, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { hasScope } from '@stageflow/runtime';
import { BearerAuthGuard, callerOf, operatorOf, RequiresToken, type Caller } from '../auth.guard';
import { ApiErrorFilter } from '../errors.filter';
import { RunOperations } from '../operations';
import { createMcpServer } from './tools';

type Request_ = IncomingMessage & { body?: unknown; caller?: Caller };

@Controller('mcp')
@UseGuards(BearerAuthGuard)
@UseFilters(ApiErrorFilter)
@RequiresToken()
export class McpController {
  constructor(@Inject(RunOperations) private readonly ops: RunOperations) {}

  @Post()
  async post(@Req() req: Request_, @Res() res: ServerResponse): Promise<void> {
    const caller = callerOf(req);
    const { token } = caller;
    const server = createMcpServer(this.ops, {
      ...operatorOf(caller, 'mcp'),
      refusal: (scope) => (hasScope(token, scope) ? undefined : `this tool needs the ${scope} scope; token ${token.name} has ${token.scopes.join(', ')}`),
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  @All()
  other(@Res() res: ServerResponse): void {
    res.writeHead(405, { 'content-type': 'application/json', allow: 'POST' }).end(
      JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'this MCP endpoint is stateless: only POST is served' }, id: null }),
    );
  }
}
