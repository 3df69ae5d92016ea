export type { AfterCheckContext, CapturedEnvelope, CommandEnvironment, OperatorExchange, PayloadValidationError, PayloadValidator } from './types';
export { CheckCannotRunError } from './errors';
export { parseRelativePath, type ParsedPath } from './paths';

export { sealDirectory, type SealOptions } from './snapshot/seal';
export { DEFAULT_SNAPSHOT_LIMITS, SnapshotBudget, type SnapshotLimits } from './snapshot/limits';
export { SnapshotRefusedError, type SnapshotRefusal, type SnapshotRule } from './snapshot/refusal';
export { materializeSnapshot } from './snapshot/materialize';
export { readManifest, InvalidManifestError } from './snapshot/read-manifest';
export { blobDigest } from './snapshot/digest';
export {
  changedPaths,
  diffManifests,
  MODE_EXECUTABLE,
  MODE_FILE,
  MODE_SYMLINK,
  type ManifestDiff,
  type ManifestEntry,
  type SealedSnapshot,
  type SnapshotManifest,
} from './snapshot/manifest';

export { runAfterChecks, afterPhaseItems } from './after/run-after-checks';
export { satisfiesGate } from './after/gate-check';
export { DEFAULT_COMMAND_TIMEOUT_MS, OUTPUT_CAP_BYTES } from './after/command-check';
export { looksSecret, secretValues } from './command/environment';
export { redact, REDACTED } from '@stageflow/sandbox';

export { inspectArtifact, ANALYSIS_LIMIT_BYTES, type ArtifactEvidence, type ArtifactInspection } from './artifact/inspect';
export { findSections, type SectionFindings } from './artifact/sections';
export { judgeRunnerEvidence, type Runner, type RunnerFinding } from './artifact/runner-evidence';

export { checkRequiredOutputs, formatSelfCheck, requiredOutputs, MTIME_SLACK_MS, type SelfCheckInput, type SelfCheckResult } from './self-check';
