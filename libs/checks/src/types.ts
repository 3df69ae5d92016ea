/** What the after-phase checks are given: everything they judge, nothing they could change. */
import type { GateKind, IoSchema } from './domain';
import type { Sandbox } from '@stageflow/sandbox';
import type { SnapshotManifest } from './snapshot/manifest';

/** The captured candidate envelope, as far as the checks read it. */
export interface CapturedEnvelope {
  readonly status: 'success' | 'failure';
  readonly summary: string;
  readonly artifacts: readonly string[];
  readonly payload?: unknown;
  readonly checklist_attestations?: readonly { readonly check_id: string; readonly items: readonly string[] }[];
}

/** One `ask_operator` exchange of this stage, from any attempt of the run so far. */
export interface OperatorExchange {
  readonly kind: GateKind;
  /** Operator's decision on confirm / artifact_backed exchanges. */
  readonly decision?: 'accept' | 'reject';
  readonly answered: boolean;
  readonly attempt: number;
}

export interface PayloadValidationError {
  /** JSON pointer into the payload. */
  readonly path: string;
  readonly message: string;
}

/** The catalog's compiler of the io schema subset (001_*): the one validator of payloads. */
export type PayloadValidator = (
  schema: IoSchema,
  payload: unknown,
) => { readonly valid: boolean; readonly errors: readonly PayloadValidationError[] };

export interface CommandEnvironment {
  /** Secret-looking values here are redacted from evidence; nothing of it reaches the command. Default: process.env. */
  readonly base?: Readonly<Record<string, string | undefined>>;
  /** The command's documented values (the attempt's SF_*): with PATH, HOME, TMPDIR and the locale, its whole environment. */
  readonly set?: Readonly<Record<string, string>>;
}

export interface AfterCheckContext {
  /** The materialized checkout the attempt left (commands run here). */
  readonly checkoutDir: string;
  /** The attempt's artifact directory: stages/<stageId>/attempts/<n>/artifacts. */
  readonly artifactsDir: string;
  readonly envelope: CapturedEnvelope;
  /** The stage's io.output.schema. */
  readonly outputSchema: IoSchema;
  /** Required by payload_schema checks; without it they end in `error`. */
  readonly validatePayload?: PayloadValidator;
  /** This stage's exchanges over the run so far, in any order. */
  readonly operatorExchanges: readonly OperatorExchange[];
  /** Required by checkout_changes checks; without them they end in `error`. */
  readonly baselineManifest?: SnapshotManifest;
  readonly afterManifest?: SnapshotManifest;
  readonly env?: CommandEnvironment;
  /** Strings never to appear in evidence, in addition to secret-looking variables of `env.base`. */
  readonly secrets?: readonly string[];
  /** Called every `progressIntervalMs` while a command runs (e.g. to extend a job's ack deadline). */
  readonly onProgress?: () => void;
  /** Default 5000. */
  readonly progressIntervalMs?: number;
  /** Where `command` checks run. Default: the process-wide sandbox (`defaultSandbox()`). */
  readonly sandbox?: Sandbox;
}
