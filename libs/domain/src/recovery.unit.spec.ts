import type { OnVerifyFail } from './pipeline';
import { decideRecovery, type ApplyRecoveryPolicy } from './recovery';
import { check, ev, given, NOW, pipeline, stage } from './testing';

const policy = (p: Partial<OnVerifyFail> = {}): OnVerifyFail => ({
  mode: 'repair',
  max_attempts: 3,
  retry_safety: 'idempotent',
  include_failed_checks: true,
  ...p,
});
const withPolicy = (p?: OnVerifyFail) => pipeline(stage('impl', { entry: true, ...(p ? { on_verify_fail: p } : {}) }));
const apply = (attempt = 1): ApplyRecoveryPolicy => ({ type: 'ApplyRecoveryPolicy', stageId: 'impl', attempt, now: NOW });
const failedChecks = [check('unit-tests', 'failed', 'exit 1'), check('report', 'passed')];
const failedVerification = (attempt = 1) => [
  ev.started('impl', attempt),
  ev.captured('impl', attempt),
  ev.verified('impl', attempt, failedChecks, 'failed checks: unit-tests'),
];

describe('recovery: passed and honest failures', () => {
  it('passed verification: the stage succeeds with the captured envelope, once', () => {
    given(ev.requested(withPolicy()), ev.started('impl'), ev.captured('impl'), ev.verified('impl'))
      .when(decideRecovery, apply())
      .thenIdempotent();
    given(ev.requested(withPolicy()), ev.started('impl'), ev.captured('impl'), ev.verified('impl'))
      .when(decideRecovery, apply())
      .then({ type: 'StageSucceeded', stageId: 'impl', attempt: 1, envelope: { status: 'success' } });
  });

  it('an agent failure never repairs, even under a repair policy', () => {
    given(ev.requested(withPolicy(policy())), ev.started('impl'), ev.attemptFailed('impl', 1, 'gave up'))
      .when(decideRecovery, apply())
      .then({ type: 'StageFailed', kind: 'agent', reason: 'gave up' });
  });

  it('disposition error: verification_error, no automatic repair', () => {
    given(ev.requested(withPolicy(policy())), ev.started('impl'), ev.captured('impl'), ev.verifierError('impl', 1, 'spawn ENOENT'))
      .when(decideRecovery, apply())
      .then({ type: 'StageFailed', kind: 'verification_error', reason: 'verification error: spawn ENOENT' });
  });

  it('no policy: a failed verification fails the stage', () => {
    given(ev.requested(withPolicy()), failedVerification())
      .when(decideRecovery, apply())
      .then({ type: 'StageFailed', kind: 'verification', reason: 'verification failed: failed checks: unit-tests' });
  });

  it('does nothing while the attempt runs, for an attempt that is not the latest, or after the stage settled', () => {
    given(ev.requested(withPolicy()), ev.started('impl')).when(decideRecovery, apply()).thenNothing();
    given(ev.requested(withPolicy(policy())), failedVerification(), ev.started('impl', 2)).when(decideRecovery, apply(1)).thenNothing();
    given(ev.requested(withPolicy()), failedVerification(), ev.failed('impl', 1, 'verification')).when(decideRecovery, apply()).thenNothing();
  });
});

describe('recovery: repair', () => {
  it('repairs while attempts < max_attempts, with a capsule of the failed checks and their evidence', () => {
    given(ev.requested(withPolicy(policy())), failedVerification())
      .when(decideRecovery, apply())
      .then({
        type: 'StageAttemptStarted',
        stageId: 'impl',
        attempt: 2,
        reason: 'repair',
        capsule: {
          attempt: 1,
          summary: 'failed checks: unit-tests',
          failed_checks: [{ id: 'unit-tests', type: 'command', status: 'failed', message: 'exit 1', evidence: { exit_code: 1 } }],
        },
      });
  });

  it('include_failed_checks: false keeps the capsule without the checks', () => {
    given(ev.requested(withPolicy(policy({ include_failed_checks: false }))), failedVerification())
      .when(decideRecovery, apply())
      .then({ type: 'StageAttemptStarted', reason: 'repair', capsule: { attempt: 1, failed_checks: [] } });
  });

  it('cuts long evidence so the capsule stays compact', () => {
    const long = { ...check('t', 'failed'), evidence: { stdout: 'x'.repeat(5000) } };
    const [started] = given(ev.requested(withPolicy(policy())), ev.started('impl'), ev.captured('impl'), ev.verified('impl', 1, [long], 'f'))
      .when(decideRecovery, apply())
      .then({ type: 'StageAttemptStarted' });
    const stdout = (started as unknown as { capsule: { failed_checks: { evidence: { stdout: string } }[] } }).capsule.failed_checks[0].evidence.stdout;
    expect(stdout.length).toBeLessThan(2100);
    expect(stdout).toMatch(/cut to last 2000 chars/);
  });

  it('exhausted: the attempt that reaches max_attempts fails the stage', () => {
    given(ev.requested(withPolicy(policy({ max_attempts: 2 }))), failedVerification(1), failedVerification(2))
      .when(decideRecovery, apply(2))
      .then({ type: 'StageFailed', attempt: 2, kind: 'verification' });
  });

  it('a side-effecting stage never repairs', () => {
    given(ev.requested(withPolicy(policy({ retry_safety: 'side_effecting' }))), failedVerification())
      .when(decideRecovery, apply())
      .then({ type: 'StageFailed', kind: 'verification' });
  });
});

describe('recovery: manual', () => {
  it('opens one decision and fails the stage; a redelivery opens nothing more', () => {
    const manual = withPolicy(policy({ mode: 'manual', retry_safety: 'side_effecting' }));
    given(ev.requested(manual), failedVerification())
      .when(decideRecovery, apply())
      .then({ type: 'StageFailed', kind: 'verification' }, { type: 'ManualRecoveryOpened', stageId: 'impl', attempt: 1 });
    given(ev.requested(manual), failedVerification()).when(decideRecovery, apply()).thenIdempotent();
  });
});
