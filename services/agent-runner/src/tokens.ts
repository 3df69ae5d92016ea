export const AGENT_BACKEND = Symbol('stageflow.agent-backend');
