// Global setup for the int and e2e tiers: use NATS_URL / DATABASE_URL when set, else the local
// servers on their default ports; only for a server that was not named and does not answer, and
// only where a container runtime exists, is it started with testcontainers. Fails fast otherwise.
const net = require('node:net');

function reachable(url, defaultPort) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port || defaultPort) });
    socket.setTimeout(1500);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

module.exports = async function globalSetup() {
  const givenNats = process.env.SF_TEST_NATS_URL || process.env.NATS_URL;
  const givenDb = process.env.SF_TEST_DATABASE_URL || process.env.DATABASE_URL;
  const natsUrl = givenNats || 'nats://127.0.0.1:4222';
  const dbUrl = givenDb || 'postgres://postgres@127.0.0.1:5432/test';
  const [natsUp, pgUp] = await Promise.all([reachable(natsUrl, 4222), reachable(dbUrl, 5432)]);
  if (natsUp && pgUp) {
    process.env.SF_TEST_NATS_URL = natsUrl;
    process.env.SF_TEST_DATABASE_URL = dbUrl;
    return;
  }
  // A server named explicitly is never replaced by a container: its being down is the error.
  if ((givenNats && !natsUp) || (givenDb && !pgUp)) {
    throw new Error(`integration tests: ${givenNats && !natsUp ? `NATS at ${natsUrl}` : `Postgres at ${dbUrl}`} does not answer`);
  }
  let tc;
  try {
    tc = require('testcontainers');
    await tc.getContainerRuntimeClient();
  } catch (err) {
    throw new Error(
      `integration tests need NATS (${natsUrl}: ${natsUp ? 'up' : 'down'}) and Postgres (${dbUrl}: ${pgUp ? 'up' : 'down'}); ` +
        'set NATS_URL / DATABASE_URL, start the servers, or provide a container runtime for testcontainers',
    );
  }
  const started = [];
  if (!natsUp) {
    const nats = await new tc.GenericContainer('nats:2.10').withCommand(['-js']).withExposedPorts(4222).start();
    started.push(nats);
    process.env.SF_TEST_NATS_URL = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
  } else process.env.SF_TEST_NATS_URL = natsUrl;
  if (!pgUp) {
    const pg = await new tc.GenericContainer('postgres:15')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust', POSTGRES_DB: 'test' })
      .withExposedPorts(5432)
      .withWaitStrategy(tc.Wait.forLogMessage(/ready to accept connections/, 2))
      .start();
    started.push(pg);
    process.env.SF_TEST_DATABASE_URL = `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/test`;
  } else process.env.SF_TEST_DATABASE_URL = dbUrl;
  globalThis.__SF_CONTAINERS__ = started;
};
