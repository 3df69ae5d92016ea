export { agentJobId, type AgentJob } from '@stageflow/proto';
