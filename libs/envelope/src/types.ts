import type { Exchange, IoSchema, StageDefinition } from '@stageflow/domain';

/**
 * Validates a payload against an io schema (the 001_* subset). Returns null when the value
 * conforms, otherwise one human-readable message naming the offending path. The lead wires the
 * catalog's compiled validator in; this library never compiles schemas itself.
 */
export type ValidatePayload = (schema: IoSchema, value: unknown) => string | null;

export interface EmitContext {
  readonly stage: StageDefinition;
  readonly validatePayload: ValidatePayload;
  /** This attempt's ask_operator exchanges, oldest first (read by emit-phase gate items). */
  readonly exchangesThisAttempt: readonly Exchange[];
  /** false once the loop has used its max_replays: a send_back is then rejected. */
  readonly loopAllowsSendBack?: boolean;
}
