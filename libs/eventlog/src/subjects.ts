import { invalidArgument } from './errors';

/** The subject spaces of one namespace: events and commands are appended, dead letters recorded, jobs queued. */
export interface Subjects {
  readonly namespace: string;
  /** Subjects an append may target (the events stream's subjects). */
  readonly appendable: readonly string[];
  dead(queue: string): string;
  work(queue: string): string;
}

const TOKEN = /^[A-Za-z0-9_-]+$/;

export function subjectsFor(namespace: string): Subjects {
  assertName('namespace', namespace);
  return {
    namespace,
    appendable: [`${namespace}.evt.>`, `${namespace}.dead.>`],
    dead: (queue) => `${namespace}.dead.${queue}`,
    work: (queue) => `${namespace}.work.${queue}`,
  };
}

/** Names that become one subject token or part of a stream / consumer name: letters, digits, `_`, `-`. */
export function assertName(kind: string, name: string): void {
  if (!TOKEN.test(name)) throw invalidArgument(`invalid ${kind} "${name}": use letters, digits, "_" or "-"`);
}

function tokensValid(tokens: readonly string[], wildcards: boolean): boolean {
  return tokens.every((token, i) => {
    if (token === '' || /[\s]/.test(token)) return false;
    if (token === '>') return wildcards && i === tokens.length - 1;
    if (token === '*') return wildcards;
    return !token.includes('*') && !token.includes('>');
  });
}

/** A subject a message is stored on: dot-separated non-empty tokens, no wildcards, no whitespace. */
export function assertSubject(subject: string): void {
  if (!tokensValid(subject.split('.'), false)) throw invalidArgument(`invalid subject "${subject}"`);
}

/** A filter: like a subject, where a token may be `*` (one token) and the last token may be `>` (one or more). */
export function assertFilter(filter: string): void {
  if (!tokensValid(filter.split('.'), true)) throw invalidArgument(`invalid subject filter "${filter}"`);
}

/** NATS subject matching: `*` matches one token, a trailing `>` one or more. */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i;
    if (i >= s.length || (f[i] !== '*' && f[i] !== s[i])) return false;
  }
  return f.length === s.length;
}

export function assertAppendable(subjects: Subjects, subject: string): void {
  assertSubject(subject);
  if (!subjects.appendable.some((space) => subjectMatches(space, subject))) {
    throw invalidArgument(`subject "${subject}" is outside the log (${subjects.appendable.join(', ')})`);
  }
}

/**
 * The part of `filter` inside `space` (a filter of literal tokens ending in `>`), or undefined when
 * they share no subject. `<ns>.*.run.>` within `<ns>.evt.>` is `<ns>.evt.run.>`.
 */
export function intersect(filter: string, space: string): string | undefined {
  const f = filter.split('.');
  const prefix = space.split('.').slice(0, -1);
  for (let i = 0; i < prefix.length; i++) {
    if (f[i] === '>') return space;
    if (i >= f.length || (f[i] !== '*' && f[i] !== prefix[i])) return undefined;
  }
  return f.length > prefix.length ? [...prefix, ...f.slice(prefix.length)].join('.') : undefined;
}

/**
 * A durable subscription's filter must lie inside one subject space (`<ns>.evt.>`,
 * `<ns>.dead.>`): a JetStream consumer (nats-server 2.9) filters on a subset of one stream subject.
 */
export function assertSubscribable(subjects: Subjects, filter: string): void {
  assertFilter(filter);
  if (!subjects.appendable.some((space) => intersect(filter, space) === filter)) {
    throw invalidArgument(`subscription filter "${filter}" must lie inside one of ${subjects.appendable.join(', ')}`);
  }
}
