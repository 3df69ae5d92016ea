import { HttpException } from '@nestjs/common';
import { HealthController } from './health.controller';

describe('/readyz', () => {
  it('is ready when the consumers run and no subscription was refused', async () => {
    await expect(new HealthController({ ready: () => true, denied: () => [] }).readyz()).resolves.toEqual({ ready: true, consumers: true });
  });

  it('is not ready, and names the subject, when the broker refused a subscription', async () => {
    const advisory = '$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.SF_WORK.agent';
    const failure = await new HealthController({ ready: () => true, denied: () => [advisory] }).readyz().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(HttpException);
    expect((failure as HttpException).getStatus()).toBe(503);
    expect((failure as HttpException).getResponse()).toMatchObject({ ready: false, denied_subscriptions: [advisory] });
  });
});
