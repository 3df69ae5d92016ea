/** Types of generate.js, for the drift test. */
export interface Generated {
  /** Schema path relative to proto/schemas (posix) → document. */
  readonly files: Record<string, Record<string, unknown>>;
  /** Members of the `RunEvent` union, in declaration order. */
  readonly eventTypes: string[];
}
export function generateAll(): Generated;
export function committedSchemaPaths(dir?: string, prefix?: string): string[];
export function serialize(doc: unknown): string;
export const SCHEMAS_DIR: string;
export const BASE_ID: string;
