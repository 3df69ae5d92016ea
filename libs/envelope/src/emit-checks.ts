/**
 * Emit-phase verify of 001_* "Emit-phase verify". Guarantees: runs only on success emits; only
 * items whose `when` includes `emit`; declaration order; stops at the first failure and returns
 * its message (null when all pass). Reads no disk: the artifact item is a list check.
 */
import type { ArtifactCheck, Exchange, GateCheck, StageDefinition, StageEnvelope } from '@stageflow/domain';

export function runEmitChecks(
  stage: StageDefinition,
  envelope: StageEnvelope,
  exchangesThisAttempt: readonly Exchange[],
): string | null {
  if (envelope.status !== 'success') return null;
  for (const item of stage.verify) {
    if (!item.when.includes('emit')) continue;
    let problem: string | null;
    switch (item.type) {
      case 'gate':
        problem = gateProblem(item, exchangesThisAttempt);
        break;
      case 'artifact':
        problem = artifactProblem(item, envelope.artifacts);
        break;
      // After-phase only check types: the catalog refuses them at emit, so nothing to do here.
      case 'command':
      case 'checklist':
      case 'payload_schema':
      case 'checkout_changes':
        problem = null;
        break;
      default: {
        const unreachable: never = item;
        problem = `emit-phase check of unknown type ${(unreachable as { type: string }).type}`;
      }
    }
    if (problem) return `emit-phase check ${item.id} failed: ${problem}`;
  }
  return null;
}

function gateProblem(item: GateCheck, exchanges: readonly Exchange[]): string | null {
  const last = [...exchanges].reverse().find((x) => x.question.kind === item.kind);
  if (!last) {
    return `no ${item.kind} ask_operator exchange in this attempt; call ask_operator with kind ${item.kind} and emit after the operator answers`;
  }
  if (!last.answer) return `the last ${item.kind} question (${last.exchangeId}) has no answer yet`;
  if (item.kind === 'confirm' || item.kind === 'artifact_backed') {
    return last.answer.decision === 'accept'
      ? null
      : `the operator's decision on the last ${item.kind} question (${last.exchangeId}) was ${last.answer.decision ?? 'not given'}, not accept; address the feedback and ask again`;
  }
  return null;
}

function artifactProblem(item: ArtifactCheck, artifacts: readonly string[]): string | null {
  const name = item.basename ?? (item.path ? basename(item.path) : undefined);
  if (!name) return 'the check names neither basename nor path (a stage definition error)';
  const found = artifacts.some((a) => a === name || a.endsWith(`/${name}`));
  return found
    ? null
    : `artifacts must include ${name} (verbatim or as a path ending in /${name}); write it with write_stage_artifact and list the returned path`;
}

function basename(path: string): string {
  const parts = path.split('/').filter(Boolean);
  return parts[parts.length - 1] ?? '';
}
