/** Which derived rows differ between two folds of the same run. */
import type { RunRows } from './rows';
import { RUN_TABLES, tables, type Row, type RunTableName } from './tables';

const keyOf = (key: readonly string[], row: Row): string => JSON.stringify(key.map((c) => row[c]));

/**
 * Rows of `next` that are new or changed since `prev`. A fold never removes an entity (runs,
 * stages, attempts, checks, exchanges, decisions and envelopes only appear or change), so rows
 * of `prev` are never deleted.
 */
export function changedRows(prev: RunRows, next: RunRows): { [T in RunTableName]: Row[] } {
  const out = {} as { [T in RunTableName]: Row[] };
  for (const table of RUN_TABLES) {
    const key = tables[table].key;
    const before = new Map(prev[table].map((row) => [keyOf(key, row), JSON.stringify(row)]));
    out[table] = next[table].filter((row) => before.get(keyOf(key, row)) !== JSON.stringify(row));
  }
  return out;
}
