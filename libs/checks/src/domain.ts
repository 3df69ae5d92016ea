/** The domain types this library consumes, from their one source. */
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
  CheckResult,
  CheckStatus,
} from '@stageflow/domain';
