/**
 * The resolved pipeline: what the catalog produces after loading and validating YAML, and what
 * every other part of the system consumes. Plain JSON (it travels inline in run requests and is
 * stored in the event log), with every `uses:` inlined and every `$ref` resolved.
 */

/** A JSON Schema node in the io subset of 001_* (object, string, number, integer, boolean, array). */
export type IoSchema = { readonly [keyword: string]: unknown };

export const GATE_KINDS = ['free_text', 'confirm', 'multi_question', 'artifact_backed'] as const;
export type GateKind = (typeof GATE_KINDS)[number];

export const CHECK_TYPES = [
  'command',
  'artifact',
  'checklist',
  'payload_schema',
  'gate',
  'checkout_changes',
] as const;
export type CheckType = (typeof CHECK_TYPES)[number];

export type CheckPhase = 'emit' | 'after';

interface VerifyItemBase {
  readonly id: string;
  /** Always explicit after resolution: defaults are applied by the catalog. */
  readonly when: readonly CheckPhase[];
}

export interface CommandCheck extends VerifyItemBase {
  readonly type: 'command';
  readonly run: string;
  readonly cwd?: string;
  readonly timeout_ms?: number;
  /** The check's sandbox gets a user-mode network (never the host loopback). Default: none. */
  readonly network?: boolean;
}

export interface ArtifactCheck extends VerifyItemBase {
  readonly type: 'artifact';
  /** Relative to the attempt's artifact directory (after phase); its basename is used at emit. */
  readonly path?: string;
  /** Emit-phase list check only. */
  readonly basename?: string;
  readonly nonempty?: boolean;
  /** 004_*: each must appear as a Markdown heading or a bold-only line. */
  readonly sections?: readonly string[];
  /** 004_*: the file must hold a real test runner's own summary, judged by its last result. */
  readonly runner_evidence?: boolean;
}

export interface ChecklistCheck extends VerifyItemBase {
  readonly type: 'checklist';
  readonly items: readonly string[];
}

export interface PayloadSchemaCheck extends VerifyItemBase {
  readonly type: 'payload_schema';
}

export interface GateCheck extends VerifyItemBase {
  readonly type: 'gate';
  readonly kind: GateKind;
}

export interface CheckoutChangesCheck extends VerifyItemBase {
  readonly type: 'checkout_changes';
  readonly path_fields?: readonly string[];
}

export type VerifyItem =
  | CommandCheck
  | ArtifactCheck
  | ChecklistCheck
  | PayloadSchemaCheck
  | GateCheck
  | CheckoutChangesCheck;

export interface OnVerifyFail {
  readonly mode: 'repair' | 'manual';
  readonly max_attempts: number;
  readonly retry_safety: 'idempotent' | 'side_effecting';
  readonly include_failed_checks: boolean;
}

export const PREDICATE_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in'] as const;
export type PredicateOp = (typeof PREDICATE_OPS)[number];

export type RoutePredicate =
  | { readonly field: string; readonly op: PredicateOp; readonly value: unknown }
  | { readonly all: readonly RoutePredicate[] }
  | { readonly any: readonly RoutePredicate[] }
  | { readonly not: RoutePredicate };

export type EdgeOutcome = 'succeeded' | 'failed' | 'skipped';

export interface RouteEdge {
  readonly to: string;
  readonly if?: RoutePredicate;
  /** Outcomes of the source that opt this edge out of the skip cascade. Default: ['succeeded']. */
  readonly on?: readonly EdgeOutcome[];
}

export interface LoopRoute {
  readonly type: 'loop';
  readonly to: string;
  readonly max_replays: number;
  readonly on_max_replays: 'require_continue' | 'wait_for_human';
  readonly replay_session?: string;
}

/** Constructed DAGs only (library API): the agent picks which immediate successors run. */
export interface ForkSpec {
  readonly select: 'one' | 'subset';
  readonly allow_none?: boolean;
}

/** Clone chain roles (see the reference's yaml-catalog "Clone Chain"). */
export type CloneRole =
  | { readonly role: 'emitter'; readonly child: string; readonly join: string; readonly cap: number; readonly mode: 'parallel' | 'sequential'; readonly array_field: string }
  | { readonly role: 'child'; readonly emitter: string; readonly join: string }
  | { readonly role: 'join'; readonly emitter: string; readonly child: string };

export interface StageDefinition {
  readonly id: string;
  readonly system_prompt: string;
  /** Resolved: stage ?? pipeline ?? stageflow.yaml. */
  readonly model: string;
  readonly io: { readonly input: { readonly schema: IoSchema }; readonly output: { readonly schema: IoSchema } };
  readonly verify: readonly VerifyItem[];
  readonly gate_kinds: readonly GateKind[];
  readonly timeout_ms?: number;
  /** The agent's sandboxed commands (tools, exec CLI) get a user-mode network (never the host loopback). Default: none. */
  readonly network?: boolean;
  // Wiring (from the pipeline entry).
  readonly entry: boolean;
  readonly route: readonly RouteEdge[];
  readonly loop?: LoopRoute;
  readonly on_verify_fail?: OnVerifyFail;
  readonly replay_safe: boolean;
  readonly fork?: ForkSpec;
  readonly clone?: CloneRole;
  /** Where the body came from, for error messages. */
  readonly source?: { readonly file: string; readonly uses?: string };
}

export interface PipelineDefinition {
  readonly id: string;
  readonly model?: string;
  /** In YAML declaration order (join inputs are keyed in this order). */
  readonly stages: readonly StageDefinition[];
}
