import type { CatalogIssue, IssueSink } from './issues';

export interface LoadResult<T> {
  readonly ok: boolean;
  readonly value?: T;
  readonly errors: CatalogIssue[];
  readonly warnings: CatalogIssue[];
}

/** Warnings documented as never promoted by --strict (they describe intent, not risk). */
export const NEVER_PROMOTED = new Set(['pipeline.route_all_gated', 'pipeline.model_applies']);

/**
 * Under strict, every other warning counts as an error. `ok` is true exactly when no error remains.
 */
export function settle(sink: IssueSink, strict: boolean): { ok: boolean; errors: CatalogIssue[]; warnings: CatalogIssue[] } {
  const promoted = strict ? sink.warnings.filter((w) => !NEVER_PROMOTED.has(w.code)) : [];
  const errors = [...sink.errors, ...promoted];
  const warnings = sink.warnings.filter((w) => !promoted.includes(w));
  return { ok: errors.length === 0, errors, warnings };
}
