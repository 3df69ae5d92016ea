import { validateText } from '../test/validateText';

const IO = `    io:
      input: { schema: { type: object } }
      output: { schema: { type: object } }`;

/** A one-stage inline pipeline with `extra` lines added to the stage entry. */
function oneStage(extra: string, header = ''): string {
  return `id: p\n${header}stages:\n  - id: a\n    system_prompt: Work.\n    model: m\n${IO}\n${extra}`;
}

function codes(text: string, files: Record<string, string> = {}): string[] {
  return validateText(text, files).errors.map((issue) => issue.code);
}

describe('pipeline shape', () => {
  it('accepts a minimal inline pipeline and resolves it', () => {
    const result = validateText(oneStage(''));
    expect(result.errors).toEqual([]);
    expect(result.pipeline?.stages[0]).toMatchObject({ id: 'a', model: 'm', entry: true, replay_safe: true, verify: [], gate_kinds: [] });
  });
  it.each([
    ['a non-object root', '- 1\n- 2\n', 'pipeline.invalid_shape'],
    ['empty stages', 'id: p\nstages: []\n', 'pipeline.invalid_shape'],
    ['an unknown top-level key', oneStage('', 'colour: red\n'), 'pipeline.invalid_shape'],
    ['bare string refs', 'id: p\nstages: [plan]\n', 'pipeline.string_stage_ref'],
    ['an unknown entry key', oneStage('    label: x\n'), 'pipeline.invalid_shape'],
    ['a removed key', oneStage('    needs: [b]\n'), 'pipeline.invalid_shape'],
    ['an entry with no body', 'id: p\nstages:\n  - id: a\n', 'pipeline.stage_missing_body'],
  ])('refuses %s', (_name, text, code) => {
    expect(codes(text)).toContain(code);
  });
  it('names the replacement of a removed key', () => {
    expect(validateText(oneStage('    fork: { select: one }\n')).errors[0].message).toContain('use "route" instead');
  });
  it('reports line and column from the YAML node', () => {
    const issue = validateText(oneStage('    label: x\n')).errors[0];
    expect(issue).toMatchObject({ path: 'stages[0].label', line: 9, column: 5 });
  });
});

describe('uses: and stage files', () => {
  const plan = `id: plan\nsystem_prompt: Plan.\nmodel: m\n${IO.replace(/^ {4}/gm, '')}\n`;
  it('inlines a uses: file and infers the id from its basename', () => {
    const result = validateText('id: p\nstages:\n  - uses: ./stages/plan.yaml\n', { './stages/plan.yaml': plan });
    expect(result.pipeline?.stages[0]).toMatchObject({ id: 'plan', source: { uses: './stages/plan.yaml' } });
  });
  it.each([
    ['body keys beside uses:', '    system_prompt: x\n', 'pipeline.stage_uses_inline_conflict'],
    ['verify beside uses:', '    verify: []\n', 'pipeline.stage_uses_inline_conflict'],
  ])('refuses %s', (_name, extra, code) => {
    expect(codes(`id: p\nstages:\n  - uses: ./stages/plan.yaml\n${extra}`, { './stages/plan.yaml': plan })).toContain(code);
  });
  it('refuses a missing file, an id mismatch and wiring inside a stage file', () => {
    expect(codes('id: p\nstages:\n  - uses: ./nope.yaml\n')).toContain('pipeline.missing_stage');
    expect(codes('id: p\nstages:\n  - id: other\n    uses: ./stages/plan.yaml\n', { './stages/plan.yaml': plan })).toContain('pipeline.stage_id_mismatch');
    const wired = `${plan}on_verify_fail: { mode: manual, retry_safety: idempotent }\n`;
    expect(codes('id: p\nstages:\n  - uses: ./stages/plan.yaml\n', { './stages/plan.yaml': wired })).toContain('stage.invalid_shape');
  });
});

describe('stage body', () => {
  it.each([
    ['no io', 'id: p\nstages:\n  - id: a\n    system_prompt: x\n    model: m\n', 'stage.invalid_io'],
    ['no system_prompt', 'id: p\nstages:\n  - id: a\n    model: m\n' + IO + '\n', 'stage.invalid_shape'],
    ['gate_kinds not a list', oneStage('    gate_kinds: confirm\n'), 'stage.invalid_gate_kinds'],
    ['a zero timeout', oneStage('    timeout_ms: 0\n'), 'stage.invalid_timeout_ms'],
    ['a root array output', oneStage('').replace('output: { schema: { type: object } }', 'output: { schema: { type: array, items: { type: string } } }'), 'stage.invalid_payload_schema'],
  ])('refuses %s', (_name, text, code) => {
    expect(codes(text)).toContain(code);
  });
  it('resolves the model stage ?? pipeline ?? stageflow.yaml and warns when the pipeline fills it', () => {
    const noModel = oneStage('').replace('    model: m\n', '');
    expect(validateText(noModel).errors.map((e) => e.code)).toContain('stage.missing_model');
    expect(validateText(noModel, {}, 'g').pipeline?.stages[0].model).toBe('g');
    const filled = validateText(noModel.replace('id: p\n', 'id: p\nmodel: pm\n'), {}, 'g');
    expect(filled.pipeline?.stages[0].model).toBe('pm');
    expect(filled.warnings.map((w) => w.code)).toEqual(['pipeline.model_applies']);
  });
});

describe('schemas and $ref', () => {
  const withRef = (schemas: string) => oneStage('').replace('output: { schema: { type: object } }', 'output: { schema: { $ref: "#/schemas/s" } }').replace('stages:', `schemas:\n${schemas}stages:`);
  it('inlines refs', () => {
    const result = validateText(withRef('  s: { type: object, required: [x], properties: { x: { type: string } } }\n'));
    expect(result.pipeline?.stages[0].io.output.schema).toEqual({ type: 'object', required: ['x'], properties: { x: { type: 'string' } } });
  });
  it('refuses unknown names and cycles', () => {
    expect(codes(withRef('  t: { type: object }\n'))).toContain('stage.unresolved_schema_ref');
    expect(validateText(withRef('  s: { $ref: "#/schemas/t" }\n  t: { $ref: "#/schemas/s" }\n')).errors[0].message).toContain('$ref cycle');
  });
});

describe('routes', () => {
  const two = (route: string, bOutput = '{ type: object }', extraB = '') =>
    `id: p\nstages:\n  - id: a\n    entry: true\n    system_prompt: x\n    model: m\n    io:\n      input: { schema: { type: object } }\n      output: { schema: { type: object, required: [n, s], properties: { n: { type: integer }, s: { type: string }, o: { type: string } } } }\n    route:\n${route}\n  - id: b\n    system_prompt: y\n    model: m\n    io:\n      input: { schema: ${bOutput} }\n      output: { schema: { type: object } }\n${extraB}`;
  it.each([
    ['an unknown target', '      - to: zzz', 'pipeline.dag_error'],
    ['a duplicate target', '      - to: b\n      - to: b', 'pipeline.dag_error'],
    ['an unknown op', '      - to: b\n        if: { field: n, op: like, value: 1 }', 'pipeline.route_if_invalid'],
    ['gt on a string', '      - to: b\n        if: { field: s, op: gt, value: 1 }', 'pipeline.route_if_invalid'],
    ['an optional field', '      - to: b\n        if: { field: o, op: eq, value: x }', 'pipeline.route_if_invalid'],
    ['a value of the wrong type', '      - to: b\n        if: { field: n, op: eq, value: "1" }', 'pipeline.route_if_invalid'],
    ['if with on: [failed]', '      - to: b\n        on: [failed]\n        if: { field: n, op: eq, value: 1 }', 'pipeline.route_if_invalid'],
    ['an empty any', '      - to: b\n        if: { any: [] }', 'pipeline.route_if_invalid'],
  ])('refuses %s', (_name, route, code) => {
    expect(codes(two(route))).toContain(code);
  });
  it('attaches route_if_invalid to the source stage', () => {
    expect(validateText(two('      - to: b\n        if: { field: o, op: eq, value: x }')).errors[0].stage_id).toBe('a');
  });
  it('warns when every forward entry is gated', () => {
    const result = validateText(two('      - to: b\n        if: { all: [{ field: n, op: gte, value: 2 }, { not: { field: s, op: in, value: [x] } }] }'));
    expect(result.errors).toEqual([]);
    expect(result.warnings.map((w) => w.code)).toContain('pipeline.route_all_gated');
  });
  it('refuses an io-incompatible edge, naming it', () => {
    const issue = validateText(two('      - to: b', '{ type: object, required: [zz], properties: { zz: { type: string } } }')).errors[0];
    expect(issue).toMatchObject({ code: 'pipeline.io_incompatible' });
    expect(issue.message).toContain('a -> b');
  });
  it('refuses unreachable stages, a missing entry and cycles', () => {
    expect(codes(two('      - to: b').replace('    entry: true\n', ''))).toContain('pipeline.dag_error');
    expect(codes(two('      - to: b', '{ type: object }', '    route:\n      - to: a\n'))).toContain('pipeline.dag_error');
  });
  it('checks loops: strict ancestor, replay_safe, no if', () => {
    const loop = '    route:\n      - type: loop\n        to: a\n        max_replays: 2\n        on_max_replays: require_continue\n        replay_session: resume\n';
    expect(validateText(two('      - to: b', '{ type: object }', loop)).pipeline?.stages[1].loop).toMatchObject({ to: 'a', max_replays: 2 });
    expect(codes(two('      - to: b', '{ type: object }', loop + '    replay_safe: false\n'))).toContain('pipeline.dag_error');
    expect(codes(two('      - to: b', '{ type: object }', loop.replace('to: a', 'to: b')))).toContain('pipeline.dag_error');
    expect(codes(two('      - to: b', '{ type: object }', loop + '        if: { field: n, op: eq, value: 1 }\n'))).toContain('pipeline.route_if_invalid');
  });
});

describe('verify and on_verify_fail', () => {
  const verify = (items: string, extra = '') => oneStage(`    verify:\n${items}\n${extra}`);
  it('applies when defaults', () => {
    const result = validateText(verify('      - { id: t, type: command, run: x }\n      - { id: g, type: gate, kind: confirm }', '    gate_kinds: [confirm]\n'));
    expect(result.pipeline?.stages[0].verify.map((item) => item.when)).toEqual([['after'], ['emit']]);
  });
  it.each([
    ['an unknown check type', '      - { id: t, type: llm_review }'],
    ['an unknown key on a check', '      - { id: t, type: command, run: x, shell: zsh }'],
    ['a command at emit', '      - { id: t, type: command, run: x, when: [emit] }'],
    ['an artifact without when', '      - { id: t, type: artifact, path: a.md }'],
    ['duplicate ids', '      - { id: t, type: payload_schema }\n      - { id: t, type: payload_schema }'],
    ['a gate kind not in gate_kinds', '      - { id: t, type: gate, kind: confirm }'],
    ['path_fields naming a non string-array field', '      - { id: t, type: checkout_changes, path_fields: [nope] }'],
    ['an empty sections list', '      - { id: t, type: artifact, path: a.md, sections: [], when: [after] }'],
  ])('refuses %s', (_name, items) => {
    expect(codes(verify(items))).toContain('pipeline.invalid_verify');
  });
  it('accepts artifact sections and runner_evidence', () => {
    const result = validateText(verify('      - { id: t, type: artifact, path: out.txt, sections: [Result], runner_evidence: true, when: [after] }'));
    expect(result.pipeline?.stages[0].verify[0]).toMatchObject({ sections: ['Result'], runner_evidence: true });
  });
  it.each([
    ['no after-phase check', '', '    on_verify_fail: { mode: repair, max_attempts: 2, retry_safety: idempotent }'],
    ['side_effecting repair', '      - { id: t, type: command, run: x }', '    on_verify_fail: { mode: repair, max_attempts: 2, retry_safety: side_effecting }'],
    ['max_attempts 0', '      - { id: t, type: command, run: x }', '    on_verify_fail: { mode: repair, max_attempts: 0, retry_safety: idempotent }'],
    ['an unknown key', '      - { id: t, type: command, run: x }', '    on_verify_fail: { mode: manual, retry_safety: idempotent, later: true }'],
  ])('refuses on_verify_fail with %s', (_name, items, policy) => {
    expect(codes(items === '' ? oneStage(`${policy}\n`) : verify(items, `${policy}\n`))).toContain('pipeline.invalid_recovery');
  });
});
