/** `@stageflow/proto`: the wire contract's types and validators. Schemas live in `../schemas`. */
export { validateEvent, validateRunRequest } from './validate';
export type { AgentJob, VerifyJob } from './jobs';
export { agentJobId, verifyJobId, workSubjects } from './jobs';
