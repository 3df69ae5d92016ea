export const SERVICE_NAMES = ['scheduler', 'agent-runner', 'verifier', 'recovery', 'api'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];
