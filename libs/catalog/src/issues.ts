/**
 * Catalog findings are data, never exceptions: every rule that fails produces one CatalogIssue
 * naming the file, the path inside it and the rule (its code).
 */
export interface CatalogIssue {
  readonly code: string;
  readonly message: string;
  readonly file: string;
  /** A path into the file's YAML, e.g. `stages[2].route[0].if.field`; '' is the whole document. */
  readonly path: string;
  readonly line?: number;
  readonly column?: number;
  readonly stage_id?: string;
}

export type Severity = 'error' | 'warning';

/** A path into a YAML document as a list of keys and indexes. */
export type NodePath = readonly (string | number)[];

export function formatPath(path: NodePath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? segment : `.${segment}`;
  }
  return out;
}

/** Resolves a node path to a 1-based line/column; returns undefined where the source has no node. */
export type Locator = (path: NodePath) => { line: number; column: number } | undefined;

/** Where an issue points: the file, a locator for that file, and the path inside it. */
export interface Site {
  readonly file: string;
  readonly locate: Locator;
  readonly path: NodePath;
}

export function at(site: Site, ...more: (string | number)[]): Site {
  return { file: site.file, locate: site.locate, path: [...site.path, ...more] };
}

/** Collects errors and warnings for one load; the order of reports is preserved. */
export class IssueSink {
  readonly errors: CatalogIssue[] = [];
  readonly warnings: CatalogIssue[] = [];

  error(code: string, message: string, site: Site, stageId?: string): void {
    this.errors.push(makeIssue(code, message, site, stageId));
  }

  warn(code: string, message: string, site: Site, stageId?: string): void {
    this.warnings.push(makeIssue(code, message, site, stageId));
  }

  get errorCount(): number {
    return this.errors.length;
  }
}

export function makeIssue(code: string, message: string, site: Site, stageId?: string): CatalogIssue {
  const position = site.locate(site.path);
  return {
    code,
    message,
    file: site.file,
    path: formatPath(site.path),
    ...(position !== undefined ? { line: position.line, column: position.column } : {}),
    ...(stageId !== undefined ? { stage_id: stageId } : {}),
  };
}
