/**
 * The domain types this library consumes. The single place that names their location: once
 * `@stageflow/domain` has an index, this file becomes one `export type … from '@stageflow/domain'`.
 */
export type {
  ArtifactCheck,
  CheckoutChangesCheck,
  ChecklistCheck,
  CommandCheck,
  GateCheck,
  GateKind,
  IoSchema,
  PayloadSchemaCheck,
  VerifyItem,
} from '../../domain/src/pipeline';
export type { CheckResult, CheckStatus } from '../../domain/src/verification';
