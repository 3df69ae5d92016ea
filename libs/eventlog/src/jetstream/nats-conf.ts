/**
 * Renders a nats-server configuration (valid for nats-server 2.9) with one user per entry of
 * NATS_USERS and the permissions the topology table gives it. infra/nats/nats.conf is this output
 * for namespace `sf` with passwords taken from the environment; tests render it with their own
 * namespace, port, store directory and passwords.
 */
import { NATS_USERS, type NatsUser, type Topology } from '../topology';
import { permissionsFor, type SubjectRights } from './permissions';

export interface NatsConfOptions {
  readonly namespace: string;
  readonly port: number;
  readonly httpPort?: number;
  readonly storeDir: string;
  readonly maxFileStore?: string;
  /** Literal passwords per user; absent: `$SF_NATS_<USER>_PASSWORD` resolved from the server's environment. */
  readonly passwords?: Readonly<Record<NatsUser, string>>;
}

/** The environment variable holding a user's password in the shipped configuration. */
export const passwordVariable = (user: NatsUser) => `SF_NATS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`;

export function renderNatsConf(table: Topology, options: NatsConfOptions): string {
  const lines = [
    '# Generated from libs/eventlog/src/topology.ts by `sf setup --render-nats-conf`: do not edit by hand.',
    `# One user per Stageflow process with the rights its code uses on namespace "${options.namespace}".`,
    `port: ${options.port}`,
    ...(options.httpPort !== undefined ? [`http_port: ${options.httpPort}`] : []),
    'jetstream {',
    `  store_dir: ${JSON.stringify(options.storeDir)}`,
    ...(options.maxFileStore ? [`  max_file_store: ${options.maxFileStore}`] : []),
    '}',
    'authorization {',
    '  users = [',
  ];
  for (const user of NATS_USERS) {
    const permissions = permissionsFor(user, options.namespace, table);
    const password = options.passwords ? JSON.stringify(options.passwords[user]) : `$${passwordVariable(user)}`;
    lines.push(
      '    {',
      `      user: ${JSON.stringify(user)}`,
      `      password: ${password}`,
      '      permissions: {',
      ...rights('publish', permissions.publish),
      ...rights('subscribe', permissions.subscribe),
      ...(permissions.allowResponses ? ['        allow_responses: true'] : []),
      '      }',
      '    }',
    );
  }
  lines.push('  ]', '}', '');
  return lines.join('\n');
}

function rights(kind: string, subjects: SubjectRights): string[] {
  const list = (values: readonly string[]) => values.map((v) => `            ${JSON.stringify(v)}`);
  return [
    `        ${kind}: {`,
    '          allow: [',
    ...list(subjects.allow),
    '          ]',
    ...(subjects.deny.length > 0 ? ['          deny: [', ...list(subjects.deny), '          ]'] : []),
    '        }',
  ];
}

/** The shipped infra/nats/nats.conf (namespace `sf`), or the same for another namespace. */
export function renderShippedNatsConf(table: Topology, namespace = 'sf'): string {
  return renderNatsConf(table, { namespace, port: 4222, httpPort: 8222, storeDir: '/data/jetstream', maxFileStore: '50G' });
}
