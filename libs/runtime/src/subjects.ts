/** The run id is the last token of `<ns>.evt.run.<runId>`. */
export function runIdOf(subject: string): string {
  return subject.slice(subject.lastIndexOf('.') + 1);
}
