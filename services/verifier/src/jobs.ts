export { verifyJobId, type VerifyJob } from '@stageflow/proto';
