/**
 * OpenCode's input box as agents/opencode/screen.ts reads it, on screens shaped as the real 1.18.33
 * draws them (test/e2e-opencode/opencode-vs-real.test.ts pins the real ones): the draft is read
 * between the box's bar and its bottom edge's width, so what a sidebar shows on the same lines is not
 * taken for it.
 */
import { describe, expect, it } from 'vitest';
import { classifyScreen, draftText, sameDraft } from '../../../agents/opencode/screen.js';

const EDGE = `╹${'▀'.repeat(60)}`;
/** A screen with the input box (its lines given) and, to the right of the box, a sidebar. */
function screen(box: string[], sidebar: string[] = []): string {
  const lines = ['┃', ...box.map((line) => `┃  ${line}`), '┃', '┃  Build · test-model Scripted'].map((line, i) => `${line.padEnd(61)}${sidebar[i] ? `   ${sidebar[i]}` : ''}`);
  return ['  Session one', '', ...lines, EDGE, '                                     ctrl+p commands'].join('\n');
}

describe("OpenCode's input box", () => {
  it('reads the draft between the bar and the edge, whatever a sidebar shows beside it', () => {
    const view = screen(['Fix the parser.', 'Then test it.'], ['', 'Context', '12,034 tokens']);
    expect(classifyScreen(view)).toBe('input-ready');
    expect(draftText(view)).toBe('Fix the parser.\nThen test it.');
  });

  it('reads the placeholder as an empty box', () => {
    expect(draftText(screen(['Ask anything… "Fix a TODO in the codebase"']))).toBe('');
  });

  it('reads a permission request before anything else', () => {
    expect(classifyScreen(`${screen([''])}\n△ Permission required\n  Allow once   Allow always   Reject`)).toBe('permission');
  });

  it('takes a paste it shows folded, [Pasted ~N lines], for the text of N lines, and only that', () => {
    const folded = draftText(screen(['[Pasted ~6 lines]']));
    expect(folded).toBe('[Pasted ~6 lines]');
    const six = ['One.', 'Two.', 'Three.', 'Four.', 'Five.', 'Six.'].join('\n');
    expect(sameDraft(folded, six)).toBe(true);
    expect(sameDraft(folded, `${six}\nSeven.`)).toBe(false);
    // Over 150 characters on one line, folded as one line.
    expect(sameDraft('[Pasted ~1 lines]', 'x'.repeat(200))).toBe(true);
  });
});
