/**
 * Who may call which route. Every route declares what it needs: a scope (`@RequiresScope`), any
 * valid token (`@RequiresToken`, for /mcp, whose tools check their own scopes), or nothing
 * (`@Public`, for /metrics). A route behind this guard that declares nothing is refused (fail
 * closed).
 *
 * Guarantees:
 * - No `Authorization: Bearer <token>`, or a token that is not configured: 401, whatever its
 *   length or encoding (tokens are compared as SHA-256 digests in constant time, see
 *   api-tokens.ts). A configured token without the route's scope: 403 naming the scope.
 * - The caller is the token's name: `by` on what it decides is `api:<name>` (`mcp:<name>` over
 *   MCP). `X-Stageflow-Operator` is only a display note (`claimedBy`), never the identity.
 * - Neither the token nor any part of it is put in a response, a log line or an event.
 */
import {
  type CanActivate,
  createParamDecorator,
  type ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  SetMetadata,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { INFRASTRUCTURE } from '@stageflow/messaging';
import { authenticate, hasScope, type ApiScope, type ApiToken, type Infrastructure } from '@stageflow/runtime';

export type RouteAccess = { readonly kind: 'scope'; readonly scope: ApiScope } | { readonly kind: 'token' } | { readonly kind: 'public' };

export const ROUTE_ACCESS = 'stageflow:route-access';

export const RequiresScope = (scope: ApiScope) => SetMetadata(ROUTE_ACCESS, { kind: 'scope', scope } satisfies RouteAccess);
export const RequiresToken = () => SetMetadata(ROUTE_ACCESS, { kind: 'token' } satisfies RouteAccess);
export const Public = () => SetMetadata(ROUTE_ACCESS, { kind: 'public' } satisfies RouteAccess);

/** The authenticated caller of a request. */
export interface Caller {
  readonly token: ApiToken;
  /** What `X-Stageflow-Operator` said: who the caller says is behind it, not verified. */
  readonly claimedBy?: string;
}

const MAX_CLAIM_CHARS = 200;

interface AuthRequest {
  headers: Record<string, string | string[] | undefined>;
  caller?: Caller;
}

@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    @Inject(INFRASTRUCTURE) private readonly infra: Infrastructure,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const access = this.reflector.getAllAndOverride<RouteAccess | undefined>(ROUTE_ACCESS, [context.getHandler(), context.getClass()]);
    if (access?.kind === 'public') return true;
    const request = context.switchToHttp().getRequest<AuthRequest>();
    const token = this.tokenOf(request.headers.authorization);
    if (!token) throw new UnauthorizedException({ error: 'unauthorized', message: 'a valid bearer token is required' });
    if (!access) throw new ForbiddenException({ error: 'forbidden', message: 'this route declares no scope and is refused' });
    if (access.kind === 'scope' && !hasScope(token, access.scope)) {
      throw new ForbiddenException({ error: 'forbidden', message: `this route needs the ${access.scope} scope; token ${token.name} has ${token.scopes.join(', ')}` });
    }
    const claim = request.headers['x-stageflow-operator'];
    const claimedBy = typeof claim === 'string' ? claim.trim().slice(0, MAX_CLAIM_CHARS) : '';
    request.caller = { token, ...(claimedBy ? { claimedBy } : {}) };
    return true;
  }

  private tokenOf(header: string | string[] | undefined): ApiToken | undefined {
    if (typeof header !== 'string') return undefined;
    const match = /^Bearer +(\S+) *$/i.exec(header);
    return match ? authenticate(this.infra.config.apiTokens, match[1]) : undefined;
  }
}

/** The caller the guard authenticated (a route that requires a token or a scope). */
export function callerOf(request: { caller?: Caller }): Caller {
  if (!request.caller) throw new Error('no authenticated caller: the route must require a token or a scope');
  return request.caller;
}

/** Who a decision or request is recorded as made by: the token's name, with the display note apart. */
export interface Operator {
  readonly by: string;
  readonly claimedBy?: string;
}

export const operatorOf = (caller: Caller, channel: 'api' | 'mcp'): Operator => ({ by: `${channel}:${caller.token.name}`, ...(caller.claimedBy ? { claimedBy: caller.claimedBy } : {}) });

/** Route parameter: the operator of this request over REST. */
export const ApiOperator = createParamDecorator((_data: unknown, context: ExecutionContext): Operator => operatorOf(callerOf(context.switchToHttp().getRequest()), 'api'));
