/**
 * NATS permissions of each user, derived from the topology table: exactly the subjects and
 * JetStream API calls the code of that process makes, on its own namespace's streams.
 *
 * - Never granted to a service or the CLI: `$JS.API.>`, stream create / update / delete / purge,
 *   the creation or deletion of any durable consumer, pulls from another user's durable.
 * - Reads of the events stream use direct gets and short-lived reader consumers with random names;
 *   a reader may create, pull and delete those, but the name of every durable in the table is
 *   denied for creation and deletion (and for pulls, unless it is the user's own).
 * - Replies come to `_INBOX.<user>.>` (each process connects with that inbox prefix), so no user
 *   can listen to another's replies; a user that serves requests answers through allow_responses.
 */
import { type NatsUser, type Topology, withNamespace } from '../topology';
import { streamNames } from './streams';

export interface SubjectRights {
  readonly allow: readonly string[];
  readonly deny: readonly string[];
}

export interface Permissions {
  readonly publish: SubjectRights;
  readonly subscribe: SubjectRights;
  /** May publish once to the reply subject of each request it received. */
  readonly allowResponses: boolean;
}

/** The inbox prefix a process connecting as `user` uses (see connect.ts). */
export const inboxPrefixOf = (user: string) => `_INBOX.${user}`;

const API = '$JS.API';

export function permissionsFor(user: NatsUser, namespace: string, table: Topology): Permissions {
  const names = streamNames(namespace);
  const ns = (subject: string) => withNamespace(subject, namespace);
  if (user === 'admin') {
    return {
      publish: { allow: [`${API}.>`, `${namespace}.>`], deny: [] },
      subscribe: { allow: [`${inboxPrefixOf(user)}.>`, '$JS.EVENT.>'], deny: [] },
      allowResponses: false,
    };
  }
  const rights = table.users[user];
  const publish: string[] = [...rights.appends.map(ns), ...rights.requests.map(ns)];
  const publishDeny: string[] = [];
  const subscribe: string[] = [`${inboxPrefixOf(user)}.>`, ...rights.serves.map(ns)];

  if (rights.readsEvents) {
    const stream = names.events;
    publish.push(
      `${API}.STREAM.INFO.${stream}`,
      `${API}.STREAM.MSG.GET.${stream}`,
      `${API}.DIRECT.GET.${stream}`,
      `${API}.DIRECT.GET.${stream}.>`,
      `${API}.CONSUMER.CREATE.${stream}.*.${namespace}.evt.>`,
      `${API}.CONSUMER.CREATE.${stream}.*.${namespace}.dead.>`,
      `${API}.CONSUMER.INFO.${stream}.*`,
      `${API}.CONSUMER.MSG.NEXT.${stream}.*`,
      `${API}.CONSUMER.DELETE.${stream}.*`,
    );
    for (const { durable, owner } of table.subscriptions) {
      publishDeny.push(`${API}.CONSUMER.CREATE.${stream}.${durable}.>`, `${API}.CONSUMER.DELETE.${stream}.${durable}`);
      if (owner !== user) publishDeny.push(`${API}.CONSUMER.MSG.NEXT.${stream}.${durable}`);
    }
  }
  for (const { durable, owner } of table.subscriptions) {
    if (owner === user) publish.push(`$JS.ACK.${names.events}.${durable}.>`);
  }
  for (const { queue, producers, consumer } of table.queues) {
    if (producers.includes(user)) publish.push(`${namespace}.work.${queue}`);
    if (consumer !== user) continue;
    publish.push(
      `${API}.CONSUMER.INFO.${names.work}.${queue}`,
      `${API}.CONSUMER.MSG.NEXT.${names.work}.${queue}`,
      `$JS.ACK.${names.work}.${queue}.>`,
      // A dead job is read once by sequence (MAX_DELIVERIES advisory) and removed from the work stream.
      `${API}.STREAM.MSG.GET.${names.work}`,
      `${API}.STREAM.MSG.DELETE.${names.work}`,
    );
    subscribe.push(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${names.work}.${queue}`);
  }
  if (rights.blobs !== 'none') {
    const objects = `OBJ_${names.blobs}`;
    publish.push(
      `${API}.DIRECT.GET.${names.smallBlobs}.${namespace}.blob.>`,
      // Large blobs: the object store's info and meta reads, and an ordered reader per object.
      `${API}.STREAM.INFO.${objects}`,
      `${API}.STREAM.MSG.GET.${objects}`,
      `${API}.DIRECT.GET.${objects}`,
      `${API}.DIRECT.GET.${objects}.>`,
      `${API}.CONSUMER.CREATE.${objects}.*.$O.${names.blobs}.C.>`,
      `${API}.CONSUMER.INFO.${objects}.*`,
      `${API}.CONSUMER.DELETE.${objects}.*`,
      `$JS.FC.${objects}.>`,
    );
  }
  if (rights.blobs === 'write') publish.push(`${namespace}.blob.>`, `$O.${names.blobs}.C.>`, `$O.${names.blobs}.M.>`);
  return {
    publish: { allow: unique(publish), deny: unique(publishDeny) },
    subscribe: { allow: unique(subscribe), deny: [] },
    allowResponses: rights.serves.length > 0,
  };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
