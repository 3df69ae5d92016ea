/**
 * The single derivation of "is this artifact present and valid": used by the after-phase artifact
 * check and by the self-check, so the two can never disagree.
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import type { ArtifactCheck } from '../domain';
import { CheckCannotRunError } from '../errors';
import { openConfined, type ConfinedOpenHooks } from './open-confined';
import type { FileKind } from './file-kind';
import { judgeRunnerEvidence, type RunnerFinding } from './runner-evidence';
import { findSections, type SectionFindings } from './sections';

/** Content beyond this many bytes is hashed but not analysed for sections or runner evidence. */
export const ANALYSIS_LIMIT_BYTES = 16 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;

export interface ArtifactEvidence {
  readonly path: string;
  readonly exists: boolean;
  /** Kind of what was found at the path (or at the refused component). */
  readonly type?: FileKind;
  readonly size?: number;
  readonly sha256?: string;
  readonly mtime?: string;
  /** Why the path was not read. */
  readonly refused?: string;
  readonly nonempty?: boolean;
  readonly sections?: SectionFindings;
  readonly runner_evidence?: { readonly found: false } | ({ readonly found: true } & RunnerFinding);
}

export interface ArtifactInspection {
  /** Empty when the artifact satisfies every declared property. */
  readonly problems: readonly string[];
  readonly evidence: ArtifactEvidence;
  readonly mtimeMs?: number;
}

interface FileContent {
  readonly sha256: string;
  /** Undefined when the file is larger than ANALYSIS_LIMIT_BYTES. */
  readonly text: string | undefined;
  readonly hasNonWhitespaceByte: boolean;
}

async function readContent(handle: FileHandle, size: number): Promise<FileContent> {
  const hash = createHash('sha256');
  const kept: Buffer[] = [];
  let hasNonWhitespaceByte = false;
  let position = 0;
  const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(size, 1)));
  while (position < size) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - position), position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    hash.update(chunk);
    if (!hasNonWhitespaceByte) hasNonWhitespaceByte = chunk.some((byte) => byte !== 0x20 && (byte < 0x09 || byte > 0x0d));
    if (size <= ANALYSIS_LIMIT_BYTES) kept.push(Buffer.from(chunk));
    position += bytesRead;
  }
  const text = size <= ANALYSIS_LIMIT_BYTES ? Buffer.concat(kept).toString('utf8') : undefined;
  return { sha256: hash.digest('hex'), text, hasNonWhitespaceByte };
}

export async function inspectArtifact(item: ArtifactCheck, artifactsDir: string, hooks?: ConfinedOpenHooks): Promise<ArtifactInspection> {
  const path = item.path;
  if (path === undefined) throw new CheckCannotRunError(`artifact check ${item.id} declares no path for the after phase`);
  const opened = await openConfined(artifactsDir, path, hooks);
  if (!opened.ok) {
    const exists = opened.kind !== undefined && opened.kind !== 'missing';
    const evidence: ArtifactEvidence = { path, exists, ...(opened.kind === undefined ? {} : { type: opened.kind }), refused: opened.reason };
    return { problems: [opened.kind === 'missing' ? `${path} is missing (${opened.reason})` : opened.reason], evidence };
  }
  try {
    const { stat } = opened;
    const content = await readContent(opened.handle, stat.size);
    const problems: string[] = [];
    const nonempty = content.text === undefined ? content.hasNonWhitespaceByte : content.text.trim().length > 0;
    if (item.nonempty === true && !nonempty) problems.push(`${path} has no non-whitespace content`);
    let sections: SectionFindings | undefined;
    let runner: ArtifactEvidence['runner_evidence'];
    const wantsText = (item.sections?.length ?? 0) > 0 || item.runner_evidence === true;
    if (wantsText && content.text === undefined) {
      problems.push(`${path} is larger than ${ANALYSIS_LIMIT_BYTES} bytes and cannot be analysed`);
    } else if (content.text !== undefined) {
      if (item.sections !== undefined && item.sections.length > 0) {
        sections = findSections(content.text, item.sections);
        if (sections.missing.length > 0) problems.push(`${path} lacks section heading(s): ${sections.missing.join(', ')}`);
      }
      if (item.runner_evidence === true) {
        const finding = judgeRunnerEvidence(content.text);
        runner = finding === undefined ? { found: false } : { found: true, ...finding };
        if (finding === undefined) problems.push(`${path} holds no test runner summary`);
        else if (finding.outcome === 'failed') problems.push(`${path}: last ${finding.runner} result failed (line ${finding.line_number}: ${finding.line})`);
      }
    }
    const evidence: ArtifactEvidence = {
      path,
      exists: true,
      type: 'file',
      size: stat.size,
      sha256: content.sha256,
      mtime: stat.mtime.toISOString(),
      nonempty,
      ...(sections === undefined ? {} : { sections }),
      ...(runner === undefined ? {} : { runner_evidence: runner }),
    };
    return { problems, evidence, mtimeMs: stat.mtimeMs };
  } finally {
    await opened.handle.close();
  }
}
