/** An in-memory stand-in for the EventLog's read side, for projector tests (append + read only). */
import type { AppendResult, EventLog, StoredMessage, SubjectRead, Subscription } from '@stageflow/eventlog';

function matches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return s.length > i;
    if (i >= s.length || (f[i] !== '*' && f[i] !== s[i])) return false;
  }
  return f.length === s.length;
}

export class MemoryLog implements EventLog {
  readonly messages: StoredMessage[] = [];
  reads = 0;

  async append(subject: string, data: unknown): Promise<AppendResult> {
    const seq = this.messages.length + 1;
    this.messages.push({ seq, subject, data, time: new Date(0).toISOString() });
    return { seq, duplicate: false };
  }

  async readSubject<T = unknown>(subject: string, afterSeq = 0): Promise<SubjectRead<T>> {
    const messages = this.messages.filter((m) => m.subject === subject && m.seq > afterSeq) as StoredMessage<T>[];
    const all = this.messages.filter((m) => m.subject === subject);
    return { messages, lastSubjectSequence: all.length ? all[all.length - 1].seq : 0 };
  }

  async read<T = unknown>(filter: string, afterSeq = 0, limit = Number.MAX_SAFE_INTEGER): Promise<readonly StoredMessage<T>[]> {
    this.reads += 1;
    const out: StoredMessage<T>[] = [];
    for (let i = afterSeq; i < this.messages.length && out.length < limit; i++) {
      const m = this.messages[i];
      if (matches(filter, m.subject)) out.push(m as StoredMessage<T>);
    }
    return out;
  }

  async lastSequence(): Promise<number> {
    return this.messages.length;
  }

  async subscribe(): Promise<Subscription> {
    throw new Error('MemoryLog is a read-side stand-in: projector tests read the log, they never subscribe');
  }

  async close(): Promise<void> {}
}
