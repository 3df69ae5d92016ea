import { Module } from '@nestjs/common';
import { INPUT_VALIDATOR, validateStageInput } from '@stageflow/runtime';
import { SchedulerController } from './scheduler.controller';

@Module({
  controllers: [SchedulerController],
  providers: [{ provide: INPUT_VALIDATOR, useValue: validateStageInput }],
})
export class SchedulerModule {}
