/** The stage envelope of 001_*: what an agent hands to the pipeline when it finishes an attempt. */

export type FeedbackLoopAction =
  | { readonly action: 'continue' }
  | { readonly action: 'send_back'; readonly target: string };

export interface ChecklistAttestation {
  readonly check_id: string;
  readonly items: readonly string[];
}

export interface StageEnvelope {
  readonly status: 'success' | 'failure';
  readonly summary: string;
  readonly artifacts: readonly string[];
  readonly payload?: { readonly [key: string]: unknown };
  readonly fork_choice?: readonly string[];
  readonly feedback_loop?: FeedbackLoopAction;
  readonly checklist_attestations?: readonly ChecklistAttestation[];
  readonly stage_id?: string;
  readonly notes?: string;
}
