import type { CatalogIssue } from './issues';
import { loadPipeline } from './loadPipeline';
import { loadStageFile } from './loadStageFile';

export interface ValidateCommandOptions {
  readonly json: boolean;
  readonly strict: boolean;
}

/**
 * `sf validate <file>`: a `*.pipeline.yaml` is loaded as a pipeline, any other YAML as a stage
 * file. Exit 0 when valid, 1 when not. `--json` prints {ok, errors, warnings}; the human form
 * prints one `file:line:column code message` line per issue, then a verdict.
 */
export function validateCommand(file: string, opts: ValidateCommandOptions): { exitCode: 0 | 1; stdout: string } {
  const result = /\.pipeline\.ya?ml$/.test(file) ? loadPipeline(file, { strict: opts.strict }) : loadStageFile(file, { strict: opts.strict });
  const exitCode = result.ok ? 0 : 1;
  if (opts.json) {
    return { exitCode, stdout: `${JSON.stringify({ ok: result.ok, errors: result.errors, warnings: result.warnings }, null, 2)}\n` };
  }
  const lines = [...result.errors.map((issue) => formatIssue(issue, 'error')), ...result.warnings.map((issue) => formatIssue(issue, 'warning'))];
  const verdict = result.ok
    ? `${file}: valid${result.warnings.length > 0 ? ` (${result.warnings.length} warning${result.warnings.length === 1 ? '' : 's'})` : ''}`
    : `${file}: invalid (${result.errors.length} error${result.errors.length === 1 ? '' : 's'}, ${result.warnings.length} warning${result.warnings.length === 1 ? '' : 's'})`;
  return { exitCode, stdout: [...lines, verdict].join('\n') + '\n' };
}

export function formatIssue(issue: CatalogIssue, severity: 'error' | 'warning'): string {
  const position = issue.line !== undefined ? `:${issue.line}:${issue.column ?? 1}` : '';
  return `${issue.file}${position} ${severity === 'error' ? '' : 'warning '}${issue.code} ${issue.message}`;
}
