import { randomBytes } from 'node:crypto';

/** Run ids sort by creation time: `run_<base36 ms><8 random hex>`, subject-token safe. */
export function newRunId(now = Date.now()): string {
  return `run_${now.toString(36).padStart(9, '0')}${randomBytes(4).toString('hex')}`;
}
