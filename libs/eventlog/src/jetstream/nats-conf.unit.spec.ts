import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NATS_USERS, topology } from '../topology';
import { passwordVariable, renderNatsConf, renderShippedNatsConf } from './nats-conf';
import { permissionsFor } from './permissions';

const ROOT = path.resolve(__dirname, '../../../..');
const NATS_SERVER = '/usr/sbin/nats-server';
const table = topology({});
const services = NATS_USERS.filter((u) => u !== 'admin');

describe('nats.conf from the topology table', () => {
  it('the committed infra/nats/nats.conf is what the table renders (regenerate: sf setup --render-nats-conf infra/nats/nats.conf)', () => {
    expect(fs.readFileSync(path.join(ROOT, 'infra/nats/nats.conf'), 'utf8')).toBe(renderShippedNatsConf(table));
  });

  it('nats-server 2.9 accepts the shipped and a test configuration', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nats-conf-'));
    try {
      const test = path.join(dir, 'test.conf');
      const passwords = Object.fromEntries(NATS_USERS.map((u) => [u, `pw-${u}`])) as Record<(typeof NATS_USERS)[number], string>;
      fs.writeFileSync(test, renderNatsConf(table, { namespace: 't1', port: 4999, storeDir: path.join(dir, 'js'), passwords }));
      const env = { ...process.env, ...Object.fromEntries(NATS_USERS.map((u) => [passwordVariable(u), 'x'])) };
      for (const file of [test, path.join(ROOT, 'infra/nats/nats.conf')]) {
        expect(() => execFileSync(NATS_SERVER, ['-c', file, '-t'], { env, stdio: 'pipe' })).not.toThrow();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each(services)('%s gets no JetStream administration and no consumer it does not own', (user) => {
    const { publish } = permissionsFor(user, 'sf', table);
    for (const subject of publish.allow) {
      expect(subject).not.toMatch(/^\$JS\.API\.(>|STREAM\.(CREATE|UPDATE|DELETE|PURGE)|CONSUMER\.DURABLE|ACCOUNT)/);
      expect(subject).not.toBe('>');
    }
    for (const { durable, owner } of table.subscriptions) {
      expect(publish.deny).toEqual(expect.arrayContaining([`$JS.API.CONSUMER.CREATE.SF_EVENTS.${durable}.>`, `$JS.API.CONSUMER.DELETE.SF_EVENTS.${durable}`]));
      if (owner !== user) expect(publish.deny).toContain(`$JS.API.CONSUMER.MSG.NEXT.SF_EVENTS.${durable}`);
    }
  });

  it('only the API may answer run requests, only runs-client may send them', () => {
    for (const user of services) {
      const rights = permissionsFor(user, 'sf', table);
      expect(rights.subscribe.allow.includes('sf.cmd.run.request')).toBe(user === 'api');
      expect(rights.publish.allow.includes('sf.cmd.run.request')).toBe(user === 'runs-client');
    }
  });

  it('each work queue is pulled and acknowledged only by its consumer', () => {
    for (const { queue, consumer } of table.queues) {
      for (const user of services) {
        const { publish } = permissionsFor(user, 'sf', table);
        expect(publish.allow.includes(`$JS.API.CONSUMER.MSG.NEXT.SF_WORK.${queue}`)).toBe(user === consumer);
        expect(publish.allow.includes(`$JS.ACK.SF_WORK.${queue}.>`)).toBe(user === consumer);
      }
    }
  });
});
