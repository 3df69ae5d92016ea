/**
 * A nats-server of a test's own (/usr/sbin/nats-server on a free port, a temporary store) running
 * the configuration the topology table renders for one namespace, with a random password per user.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { NATS_USERS, renderNatsConf, topology, type NatsUser } from '@stageflow/eventlog';

const NATS_SERVER = '/usr/sbin/nats-server';

export interface PrivateNats {
  readonly url: string;
  readonly passwords: Readonly<Record<NatsUser, string>>;
  /** NATS_USER / NATS_PASSWORD of a user, for a process's environment. */
  credentials(user: NatsUser): { NATS_USER: string; NATS_PASSWORD: string };
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startPrivateNats(namespace: string): Promise<PrivateNats> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nats-'));
  const port = await freePort();
  const passwords = Object.fromEntries(NATS_USERS.map((u) => [u, randomBytes(12).toString('hex')])) as Record<NatsUser, string>;
  const conf = path.join(dir, 'nats.conf');
  fs.writeFileSync(conf, renderNatsConf(topology(), { namespace, port, storeDir: path.join(dir, 'jetstream'), passwords }));
  const child: ChildProcess = spawn(NATS_SERVER, ['-c', conf, '-a', '127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let logs = '';
    const timer = setTimeout(() => reject(new Error(`nats-server did not start:\n${logs}`)), 20_000);
    child.stderr!.on('data', (d: Buffer) => {
      logs += d.toString();
      if (logs.includes('Server is ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`nats-server exited with ${code}:\n${logs}`));
    });
  });
  child.stderr!.resume();
  return {
    url: `nats://127.0.0.1:${port}`,
    passwords,
    credentials: (user) => ({ NATS_USER: user, NATS_PASSWORD: passwords[user] }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
