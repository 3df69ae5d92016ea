import { Controller, Get, HttpException, HttpStatus, Inject, Optional } from '@nestjs/common';
import { READINESS, type ReadinessProbe } from './tokens';
import { TRANSPORT_STATE, type TransportState } from './transport-state';

/** `/healthz`: the process serves requests. `/readyz`: its consumers run and its probes pass. */
@Controller()
export class HealthController {
  constructor(
    @Inject(TRANSPORT_STATE) private readonly transport: TransportState,
    @Optional() @Inject(READINESS) private readonly probe?: ReadinessProbe,
  ) {}

  @Get('healthz')
  healthz() {
    return { ok: true };
  }

  @Get('readyz')
  async readyz() {
    const consumers = this.transport.ready();
    const denied = this.transport.denied?.() ?? [];
    const extra = this.probe ? await this.probe() : { ready: true };
    const body = { ...extra, consumers, ...(denied.length > 0 ? { denied_subscriptions: denied } : {}), ready: consumers && denied.length === 0 && extra.ready };
    if (!body.ready) throw new HttpException(body, HttpStatus.SERVICE_UNAVAILABLE);
    return body;
  }
}
