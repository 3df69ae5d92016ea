/**
 * checklist_attestations shape of 001_* "Checklist attestations": optional; when present an
 * array of { check_id, items: string[] }, one entry per check id. Whether the items match the
 * declared checklist is the after-phase checklist check's job, not the emit's.
 */
import { isObject, isStringArray, show, unknownKeys } from './fields';

export function attestationErrors(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return [`checklist_attestations must be an array of {"check_id": string, "items": string[]}, got ${show(value)}`];
  const errors: string[] = [];
  const seen = new Set<string>();
  value.forEach((entry, i) => {
    const at = `checklist_attestations[${i}]`;
    if (!isObject(entry)) {
      errors.push(`${at} must be an object {"check_id": string, "items": string[]}, got ${show(entry)}`);
      return;
    }
    const extra = unknownKeys(entry, ['check_id', 'items']);
    if (extra.length) errors.push(`${at} has unknown field(s) ${extra.join(', ')}; only check_id and items are allowed`);
    if (typeof entry.check_id !== 'string' || !entry.check_id.trim()) {
      errors.push(`${at}.check_id must be the non-empty id of a checklist verify item`);
    } else if (seen.has(entry.check_id)) {
      errors.push(`${at}.check_id "${entry.check_id}" is attested twice; give one entry per check`);
    } else seen.add(entry.check_id);
    if (!isStringArray(entry.items)) errors.push(`${at}.items must be an array of strings (the checklist items you attest to)`);
  });
  return errors;
}
