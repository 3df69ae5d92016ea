// Stops the containers jest-services.js started (only where no NATS/Postgres was reachable).
module.exports = async function globalTeardown() {
  for (const container of globalThis.__SF_CONTAINERS__ ?? []) await container.stop();
};
