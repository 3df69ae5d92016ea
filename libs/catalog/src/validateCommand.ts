import type { VerifyItem } from '@stageflow/domain';
import type { CatalogIssue } from './issues';
import { loadPipeline } from './loadPipeline';
import { loadStageFile } from './loadStageFile';

export interface ValidateCommandOptions {
  readonly json: boolean;
  readonly strict: boolean;
}

/** One place a valid definition opens the sandbox's network: a stage (its agent) or one of its command checks. */
export interface NetworkGrant {
  readonly stage: string;
  readonly check?: string;
}

interface NetworkedStage {
  readonly id: string;
  readonly network?: boolean;
  readonly verify: readonly VerifyItem[];
}

export function networkGrants(stages: readonly NetworkedStage[]): NetworkGrant[] {
  return stages.flatMap((stage) => [
    ...(stage.network === true ? [{ stage: stage.id }] : []),
    ...stage.verify.filter((item) => item.type === 'command' && item.network === true).map((item) => ({ stage: stage.id, check: item.id })),
  ]);
}

/**
 * `sf validate <file>`: a `*.pipeline.yaml` is loaded as a pipeline, any other YAML as a stage
 * file. Exit 0 when valid, 1 when not. `--json` prints {ok, errors, warnings, network} (network:
 * every stage and command check with `network: true`); the human form prints one
 * `file:line:column code message` line per issue, a `network:` line when any is opened, then a verdict.
 */
export function validateCommand(file: string, opts: ValidateCommandOptions): { exitCode: 0 | 1; stdout: string } {
  const result = /\.pipeline\.ya?ml$/.test(file) ? loadPipeline(file, { strict: opts.strict }) : loadStageFile(file, { strict: opts.strict });
  const exitCode = result.ok ? 0 : 1;
  const stages = 'pipeline' in result ? (result.pipeline?.stages ?? []) : 'stage' in result && result.stage ? [result.stage] : [];
  const network = networkGrants(stages);
  if (opts.json) {
    return { exitCode, stdout: `${JSON.stringify({ ok: result.ok, errors: result.errors, warnings: result.warnings, network }, null, 2)}\n` };
  }
  const lines = [...result.errors.map((issue) => formatIssue(issue, 'error')), ...result.warnings.map((issue) => formatIssue(issue, 'warning'))];
  if (network.length > 0) lines.push(`network: ${network.map((grant) => (grant.check ? `${grant.stage} check ${grant.check}` : `${grant.stage} (agent)`)).join(', ')}`);
  const verdict = result.ok
    ? `${file}: valid${result.warnings.length > 0 ? ` (${result.warnings.length} warning${result.warnings.length === 1 ? '' : 's'})` : ''}`
    : `${file}: invalid (${result.errors.length} error${result.errors.length === 1 ? '' : 's'}, ${result.warnings.length} warning${result.warnings.length === 1 ? '' : 's'})`;
  return { exitCode, stdout: [...lines, verdict].join('\n') + '\n' };
}

export function formatIssue(issue: CatalogIssue, severity: 'error' | 'warning'): string {
  const position = issue.line !== undefined ? `:${issue.line}:${issue.column ?? 1}` : '';
  return `${issue.file}${position} ${severity === 'error' ? '' : 'warning '}${issue.code} ${issue.message}`;
}
