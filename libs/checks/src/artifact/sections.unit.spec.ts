import { findSections } from './sections';

describe('findSections', () => {
  it('finds ATX headings of every level and bold-only lines', () => {
    const text = ['# Root cause', '', '###### Evidence ##', '**Unknowns**', '  **Next steps:**', 'body'].join('\n');
    expect(findSections(text, ['Root cause', 'Evidence', 'Unknowns', 'next steps'])).toEqual({
      required: ['Root cause', 'Evidence', 'Unknowns', 'next steps'],
      found: ['Root cause', 'Evidence', 'Unknowns', 'next steps'],
      missing: [],
    });
  });

  it('is never satisfied by prose containing the words', () => {
    const text = 'I could not determine the root cause.\n**Root cause** was unclear to me\n#Root cause\n    # Root cause\n';
    expect(findSections(text, ['Root cause']).missing).toEqual(['Root cause']);
  });

  it('ignores headings inside fenced code blocks', () => {
    const text = '```md\n# Evidence\n```\n~~~\n**Evidence**\n~~~\n';
    expect(findSections(text, ['Evidence']).missing).toEqual(['Evidence']);
  });

  it('accepts a heading that contains the section name', () => {
    expect(findSections('## 2. Root cause analysis\n', ['root cause']).found).toEqual(['root cause']);
  });
});
