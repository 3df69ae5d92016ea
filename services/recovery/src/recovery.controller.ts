/**
 * The recovery service: when an attempt ends (verified, or failed before a candidate), it applies
 * the stage's on_verify_fail policy once — stage succeeded, repair attempt, manual decision
 * opened, or stage failed. The decision is appended with optimistic concurrency, so replicas and
 * redeliveries decide it exactly once.
 */
import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { decideRecovery } from '@stageflow/domain';
import type { StoredMessage } from '@stageflow/eventlog';
import { eventStream, STATE_HANDLER_CONCURRENCY, INFRASTRUCTURE } from '@stageflow/messaging';
import { runIdOf, type Infrastructure } from '@stageflow/runtime';

@Controller()
export class RecoveryController {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  @EventPattern(eventStream('recovery', '{ns}.evt.run.>', STATE_HANDLER_CONCURRENCY))
  async onRunMessage(@Payload() message: StoredMessage): Promise<void> {
    const runId = runIdOf(message.subject);
    for (const event of this.infra.runs.eventsOf(message)) {
      // A refused verdict ends its attempt with disposition error: the policy applies to that too.
      const refusedVerdict = event.type === 'SignatureRefused' && event.refusedType === 'AttemptVerified';
      if (event.type !== 'AttemptVerified' && event.type !== 'AttemptFailed' && !refusedVerdict) continue;
      const { stageId, attempt } = event;
      if (stageId === undefined || attempt === undefined) continue;
      await this.infra.runs.execute(runId, (state) => decideRecovery({ type: 'ApplyRecoveryPolicy', stageId, attempt, now: new Date().toISOString() }, state));
    }
  }
}
