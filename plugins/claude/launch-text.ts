/**
 * What `/launch <text>` names: the brief, and a kind when the text starts with `--kind <kind>`
 * (DESIGN.md's ruling: kind `fix` unless the brief says otherwise).
 */

/** The kind (if named) and the brief; a string when the text names a kind but no brief. */
export function parseLaunchText(text: string): { kind?: string; brief: string } | string {
  const match = /^\s*--kind(?:=|\s+)(\S+)\s*([\s\S]*)$/.exec(text);
  if (!match) return { brief: text.trim() };
  if (!match[2].trim()) return `"--kind ${match[1]}" is followed by no brief.`;
  return { kind: match[1], brief: match[2].trim() };
}
