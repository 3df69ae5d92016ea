/**
 * Required sections of a Markdown artifact. A section is present only when a line outside fenced
 * code blocks is an ATX heading (`#` … `######`) or a bold-only line (`**…**`, optional trailing
 * colon) whose text contains the section name, case-insensitively. Prose that merely contains the
 * words never counts.
 */

export interface SectionFindings {
  readonly required: readonly string[];
  readonly found: readonly string[];
  readonly missing: readonly string[];
}

const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const BOLD_ONLY = /^ {0,3}\*\*(.+?)\*\*:?[ \t]*$/;
const FENCE = /^ {0,3}(```|~~~)/;

/** The text of every heading and bold-only line, lower-cased. */
export function sectionTitles(text: string): string[] {
  const titles: string[] = [];
  let fence: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    const fenceMatch = FENCE.exec(line);
    if (fenceMatch !== null) {
      const marker = fenceMatch[1]!;
      if (fence === undefined) fence = marker;
      else if (fence === marker) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const match = HEADING.exec(line) ?? BOLD_ONLY.exec(line);
    if (match !== null) titles.push(match[1]!.toLowerCase());
  }
  return titles;
}

export function findSections(text: string, required: readonly string[]): SectionFindings {
  const titles = sectionTitles(text);
  const found: string[] = [];
  const missing: string[] = [];
  for (const section of required) {
    const wanted = section.trim().toLowerCase();
    (titles.some((title) => title.includes(wanted)) ? found : missing).push(section);
  }
  return { required, found, missing };
}
