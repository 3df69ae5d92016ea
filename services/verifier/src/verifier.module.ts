import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { INFRASTRUCTURE } from '@stageflow/messaging';
import type { Infrastructure } from '@stageflow/runtime';
import { recordVerificationErrors } from './dead-letters';
import { VerifierController } from './verifier.controller';

@Module({ controllers: [VerifierController] })
export class VerifierModule implements OnModuleInit {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  onModuleInit(): void {
    recordVerificationErrors(this.infra);
  }
}
