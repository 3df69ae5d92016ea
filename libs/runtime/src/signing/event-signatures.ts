/**
 * Signing events before they are appended and checking them when they are read.
 *
 * Guarantees:
 * - `sign` puts a signature on every event that needs one (see `signerRoleOf`), with this
 *   process's key for the role, over `signedBytes` and the candidate of the state it is decided
 *   on; a process without a key for the role cannot append such an event (KeyConfigurationError).
 * - `admit` returns an event of a signed kind unchanged only when its key is trusted, of the
 *   kind's role, and its signature verifies over the namespace and run it is read from;
 *   otherwise it returns the `SignatureRefused` to fold instead. Deterministic in the event, the
 *   subject and the trusted keys, so every reader and every rebuild decides alike.
 */
import { sign, verify } from 'node:crypto';
import { evolve, expectedCandidate, initialRunState, refusalOf, signedBytes, signerRoleOf, withSignature, type RunEvent, type RunState } from '@stageflow/domain';
import type { KeyRing } from './keys';

export interface SubjectContext {
  readonly namespace: string;
  readonly runId: string;
}

export class EventSignatures {
  constructor(
    readonly namespace: string,
    private readonly keys: KeyRing,
  ) {}

  /** `event` as appended to run `runId` after `state`: signed when its kind needs it. */
  sign(runId: string, state: RunState, event: RunEvent): RunEvent {
    const role = signerRoleOf(event);
    if (!role) return event;
    const key = this.keys.signer(role);
    const candidate = expectedCandidate(state, event);
    const bytes = Buffer.from(signedBytes({ namespace: this.namespace, runId }, event, candidate));
    return withSignature(event, { kid: key.kid, candidate, sig: sign(null, bytes, key.privateKey).toString('base64url') });
  }

  /** A run's events signed in order, each against the state the ones before it fold to (fixtures, tools). */
  signAll(runId: string, events: readonly RunEvent[]): RunEvent[] {
    let state = initialRunState();
    return events.map((event) => {
      const signed = this.sign(runId, state, event);
      state = evolve(state, signed);
      return signed;
    });
  }

  /** `event` as read from run `runId`'s subject, or the refusal that replaces it. */
  admit(runId: string, event: RunEvent): RunEvent {
    const role = signerRoleOf(event);
    if (!role) return event;
    const problem = this.problem({ namespace: this.namespace, runId }, event, role);
    return problem ? refusalOf(event, problem, runId) : event;
  }

  private problem(context: SubjectContext, event: RunEvent, role: string): string | null {
    const signature = event.signature;
    if (!signature) return 'unsigned';
    if (typeof signature.kid !== 'string' || typeof signature.sig !== 'string' || (signature.candidate !== null && typeof signature.candidate !== 'string')) {
      return 'malformed signature';
    }
    const key = this.keys.trustedKey(signature.kid);
    if (!key) return `key ${signature.kid} is not trusted`;
    if (key.role !== role) return `key ${signature.kid} is a ${key.role} key; ${event.type} needs a ${role} key`;
    const bytes = Buffer.from(signedBytes(context, event, signature.candidate));
    const valid = verify(null, bytes, key.publicKey, Buffer.from(signature.sig, 'base64url'));
    return valid ? null : `signature by ${signature.kid} does not verify`;
  }
}
