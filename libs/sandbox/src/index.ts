export { Sandbox, defaultSandbox } from './sandbox';
export { sandboxConfigFromEnv, SandboxConfigError, DEFAULT_LIMITS, DEFAULT_SANDBOX_UID, type SandboxConfig, type SandboxLimits, type SandboxMode } from './config';
export { probeSandbox, type SandboxProbe, type SandboxProperty } from './probe';
export { OUTPUT_GRACE_MS, SANDBOX_HOME, SANDBOX_TMP, sandboxIdentity, type Isolation, type SandboxCommand, type SandboxOutcome } from './run';
export type { Bind } from './mounts';
export type { OutputKeep } from './capped-output';
export type { LimitName } from './limits';
export { redact, REDACTED } from './redact';
export { embeddedStartup, missingProperties, serviceStartup, type StartupDecision } from './startup';
