/** Lets the health endpoint see whether the service's transport is consuming. */
export const TRANSPORT_STATE = Symbol('stageflow.transport-state');

export interface TransportState {
  ready(): boolean;
  /** Subjects whose subscription the broker refused (e.g. the dead-letter advisories): never ready with any. */
  denied?(): readonly string[];
}
