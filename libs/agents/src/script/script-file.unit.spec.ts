import { parseScript, ScriptError } from './script-file';

describe('parseScript', () => {
  it('parses every step kind', () => {
    const script = parseScript(
      [
        'stages:',
        '  s:',
        '    - - write_file: { path: a, content: b }',
        '      - write_artifact: { path: r.md, content: x }',
        '      - run: echo hi',
        '      - run: { command: echo hi, timeout_ms: 5 }',
        '      - ask_operator: { kind: confirm, question: ok? }',
        '      - emit: { status: success, summary: s, artifacts: [], payload: {} }',
        '      - end_turn',
        '      - end_turn: {}',
        '      - provider_error: { message: boom }',
        '      - sleep: { ms: 10 }',
      ].join('\n'),
    );
    expect(script.stages.s![0]!.map((s) => s.kind)).toEqual(['write_file', 'write_artifact', 'run', 'run', 'ask_operator', 'emit', 'end_turn', 'end_turn', 'provider_error', 'sleep']);
  });

  it.each([
    ['not yaml', 'stages: [', /\(yaml\): not valid YAML/],
    ['no stages', 'foo: 1', /\(root\): unknown key\(s\) foo/],
    ['stages not a mapping', 'stages: []', /stages: must be a mapping/],
    ['empty attempts', 'stages:\n  s: []', /stages\.s: must be a non-empty list/],
    ['attempt not a list', 'stages:\n  s:\n    - {}', /stages\.s\[0\]: an attempt must be a list/],
    ['unknown step', 'stages:\n  s:\n    - - jump: {}', /stages\.s\[0\]\[0\]: unknown step jump/],
    ['two keys in a step', 'stages:\n  s:\n    - - { end_turn: {}, sleep: { ms: 1 } }', /exactly one of/],
    ['missing field', 'stages:\n  s:\n    - - write_file: { path: a }', /write_file is missing content/],
    ['unknown field', 'stages:\n  s:\n    - - write_file: { path: a, content: b, mode: 1 }', /unknown key\(s\) mode/],
    ['bad sleep', 'stages:\n  s:\n    - - sleep: { ms: -1 }', /sleep\.ms must be a non-negative number/],
    ['non-string content', 'stages:\n  s:\n    - - write_artifact: { path: a, content: 3 }', /content must be a string/],
  ])('rejects %s with file and path', (_n, text, message) => {
    expect(() => parseScript(text, 'my.script.yaml')).toThrow(ScriptError);
    expect(() => parseScript(text, 'my.script.yaml')).toThrow(message);
    expect(() => parseScript(text, 'my.script.yaml')).toThrow(/^my\.script\.yaml: /);
  });
});
