/** Injection tokens shared by every Stageflow service module. */
export const INFRASTRUCTURE = Symbol('stageflow.infrastructure');
export const LOGGER = Symbol('stageflow.logger');
/** Extra readiness facts a service reports on /readyz (e.g. projector lag). */
export const READINESS = Symbol('stageflow.readiness');

export type ReadinessProbe = () => Promise<{ ready: boolean; [fact: string]: unknown }>;
