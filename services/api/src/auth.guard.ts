/**
 * Every API route requires `Authorization: Bearer <token>` with a token from the configuration
 * (`SF_API_TOKENS`, comma-separated). No token configured means no request is accepted.
 */
import { type CanActivate, type ExecutionContext, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { INFRASTRUCTURE } from '@stageflow/messaging';
import type { Infrastructure } from '@stageflow/runtime';

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    const header = request.headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
    if (!token || !this.infra.config.apiTokens.some((t) => same(t, token))) {
      throw new UnauthorizedException({ error: 'unauthorized', message: 'a valid bearer token is required' });
    }
    return true;
  }
}

/** The caller's identity for the decision record: a token is named by its first characters only. */
export function callerOf(headers: Record<string, string | undefined>): string {
  const token = (headers.authorization ?? '').replace(/^Bearer\s+/, '');
  return `api:${headers['x-stageflow-operator'] ?? `token-${token.slice(0, 4)}…`}`;
}
