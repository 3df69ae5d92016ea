/**
 * The run request other services publish on `sf.cmd.run.request` (JSON, with `Nats-Msg-Id` as
 * the idempotency key) or POST to `/api/runs`. Schemas in `proto/` are the promise to them.
 */

/** The pipeline by value: the pipeline file and every file it references (stage files), as text. */
export interface InlinePipelineBundle {
  /** Path of the pipeline file inside `files`, e.g. `hello.pipeline.yaml`. */
  readonly entry: string;
  /** Relative path → UTF-8 text. Paths are relative, without `..`. */
  readonly files: { readonly [path: string]: string };
}

/** The pipeline by reference: one published with `sf pipelines publish`; latest when no version. */
export interface PipelineReference {
  readonly id: string;
  readonly version?: string;
}

export type CheckoutRequest =
  | { readonly git: string; readonly ref?: string }
  | { readonly path: string };

export interface RunRequestCommand {
  readonly pipeline: { readonly inline: InlinePipelineBundle } | { readonly ref: PipelineReference };
  readonly input?: { readonly [key: string]: unknown };
  /** Absent or null: a fresh empty repository. `path` only in the embedded default. */
  readonly checkout?: CheckoutRequest | null;
  readonly labels?: { readonly [key: string]: string };
  /** Who asks (a service name, a user); recorded on the run. */
  readonly requested_by?: string;
}

/** The reply to a request message (and the body of `POST /api/runs`). */
export type RunRequestReply =
  | { readonly accepted: true; readonly run_id: string; readonly duplicate: boolean }
  | { readonly accepted: false; readonly code: string; readonly message: string };

/** Appended to `sf.evt.request.rejected` for every invalid request: never silence. */
export interface RunRequestRejected {
  readonly v: 1;
  readonly type: 'RunRequestRejected';
  readonly at: string;
  readonly idempotencyKey?: string;
  readonly code: string;
  readonly message: string;
}
