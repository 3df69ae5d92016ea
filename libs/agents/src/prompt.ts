/**
 * Prompt assembly for a stage attempt. Guarantees: the same inputs give the same text; every
 * section the agent needs is present when its input is (system prompt, task input, upstream
 * envelopes in the order given — the caller passes them keyed in YAML order —, repair capsule,
 * operator guidance, feedback-loop context, answered operator exchanges) and the tool contract
 * always closes the user message.
 */
import type { Exchange, RepairCapsule, StageDefinition, StageEnvelope } from '@stageflow/domain';

export interface Prompt {
  readonly system: string;
  readonly user: string;
}

export interface PromptInput {
  readonly stage: StageDefinition;
  readonly input: { readonly [key: string]: unknown };
  /** Keyed by stage id in YAML declaration order. */
  readonly upstream: { readonly [stageId: string]: StageEnvelope };
  readonly capsule?: RepairCapsule;
  readonly guidance?: string;
  /** The Feedback Loop Context of 001_* (JSON), on loop replays. */
  readonly loopContext?: { readonly [key: string]: unknown };
  readonly answeredExchanges: readonly Exchange[];
  /** Offered tools (names) — the contract section mentions only these. */
  readonly tools?: readonly string[];
}

const json = (value: unknown) => JSON.stringify(value, null, 2);
const section = (title: string, body: string) => `## ${title}\n\n${body.trim()}\n`;

export function buildPrompt(p: PromptInput): Prompt {
  const parts: string[] = [section('Task input', '```json\n' + json(p.input) + '\n```')];
  const upstream = Object.entries(p.upstream);
  if (upstream.length) {
    parts.push(
      section(
        'Upstream envelopes',
        upstream
          .map(([id, env]) => `### ${id} (${env.status})\n\nSummary: ${env.summary}\n\nArtifacts: ${env.artifacts.length ? env.artifacts.join(', ') : '(none)'}\n\nPayload:\n\`\`\`json\n${json(env.payload ?? {})}\n\`\`\``)
          .join('\n\n'),
      ),
    );
  }
  if (p.capsule) {
    const checks = p.capsule.failed_checks
      .map((c) => `- ${c.id} (${c.type}): ${c.status}${c.message ? ` — ${c.message}` : ''}${c.evidence ? `\n  evidence: ${JSON.stringify(c.evidence)}` : ''}`)
      .join('\n');
    parts.push(
      section(
        'Repair',
        `Attempt ${p.capsule.attempt} was not verified. Its summary: ${p.capsule.summary}\n\nFailed checks:\n${checks || '(none listed)'}\n\nThe checkout holds what that attempt left; fix it in place, then emit again.`,
      ),
    );
  }
  if (p.guidance?.trim()) parts.push(section('Operator guidance', p.guidance));
  if (p.loopContext) parts.push(section('Feedback Loop Context', '```json\n' + json(p.loopContext) + '\n```'));
  if (p.answeredExchanges.length) {
    parts.push(
      section(
        'Operator answers so far',
        p.answeredExchanges
          .filter((x) => x.answer)
          .map((x) => `- [${x.question.kind}] ${x.question.question}\n  answer: ${JSON.stringify(x.answer)}`)
          .join('\n'),
      ),
    );
  }
  parts.push(section('Tool contract', toolContract(p.stage, p.tools)));
  return { system: p.stage.system_prompt, user: parts.join('\n') };
}

function toolContract(stage: StageDefinition, tools?: readonly string[]): string {
  const has = (name: string) => !tools || tools.includes(name);
  const lines = [
    'Finish by calling emit_stage_envelope exactly once. Ending your turn is not finishing: without an accepted envelope the attempt fails.',
    'Envelope: {"status": "success"|"failure", "summary": non-empty string, "artifacts": run-relative paths ([] when none), "payload": object}. Unknown fields are rejected.',
    `On success, payload is required and must match this output schema:\n\`\`\`json\n${json(stage.io.output.schema)}\n\`\`\``,
    'An invalid emit is rejected with the reason; fix it and call again. status "failure" is accepted and ends the stage as failed.',
    'Write files you hand over with write_stage_artifact and list the paths it returns in artifacts.',
  ];
  if (stage.fork) {
    const successors = stage.route.map((e) => e.to).join(', ');
    lines.push(`This is a fork stage: on success include fork_choice naming ${stage.fork.select === 'one' ? 'exactly one' : 'the'} successor(s) to run, from: ${successors}${stage.fork.select === 'subset' && stage.fork.allow_none ? ' ([] is allowed)' : ''}.`);
  }
  if (stage.loop) {
    lines.push(`This stage is a feedback-loop source: on success include feedback_loop {"action": "continue"} or {"action": "send_back", "target": "${stage.loop.to}"}.`);
  }
  const checklists = stage.verify.filter((v) => v.type === 'checklist');
  for (const c of checklists) {
    lines.push(`Checklist ${c.id}: attest in checklist_attestations [{"check_id": "${c.id}", "items": [...]}] with exactly these items: ${JSON.stringify(c.items)}.`);
  }
  for (const v of stage.verify.filter((item) => item.when.includes('emit'))) {
    if (v.type === 'gate') lines.push(`Before emitting success, the last ${v.kind} ask_operator question of this attempt must be ${v.kind === 'confirm' || v.kind === 'artifact_backed' ? 'accepted' : 'answered'} (check ${v.id}).`);
    if (v.type === 'artifact') lines.push(`artifacts must include ${v.basename ?? v.path} (check ${v.id}).`);
  }
  if (stage.gate_kinds.length && has('ask_operator')) {
    lines.push(`ask_operator (kinds: ${stage.gate_kinds.join(', ')}) parks the session until the operator answers; end your turn after calling it. It does not complete the stage.`);
  }
  if (has('check_outputs')) {
    lines.push('check_outputs is optional: it runs the same required-output check the verifier runs after your turn. Nothing requires it; the verifier decides. Running it lets you fix a gap while there is still time.');
  }
  lines.push('After your emit, the system verifies your claims independently (commands, files on disk, payload, operator decisions).');
  return lines.map((l) => `- ${l}`).join('\n');
}
