import { describe, it, expect } from 'vitest';
import { readVerdict, readVerdicts } from '../../../deliverables/report.js';
import { CHANGE_VERIFY } from '../../../kinds/prompts.js';

describe('readVerdict', () => {
  const verdicts: Array<[string, string]> = [
    ['Verdict: pass', 'pass'],
    ['verdict: FIX', 'fix'],
    ['Verdict:pass.', 'pass'],
    ['**Verdict:** pass', 'pass'],
    ['**Verdict: fix**', 'fix'],
    ['Verdict: **pass**', 'pass'],
    ['_Verdict_: _fix_', 'fix'],
    ['## Verdict: pass', 'pass'],
    ['### **Verdict**: fix', 'fix'],
    ['- Verdict: pass', 'pass'],
    ['* Verdict: pass', 'pass'],
    ['> Verdict: fix', 'fix'],
    ['> - **Verdict:** fix', 'fix'],
    ['   Verdict: pass   ', 'pass'],
    ['Verdict: pass\r', 'pass'],
    ['Verdict: `pass`', 'pass'],
    // Trailing words, numbers and emoji, seen from real agents.
    ['Verdict: pass (2 of 2 tasks verified)', 'pass'],
    ['**Verdict: PASS** ✅', 'pass'],
    ['Verdict: ✅ PASS', 'pass'],
    ['Verdict: FIX ❌ — 2.3 is not done', 'fix'],
    ['Verdict: pass, no fixes needed', 'pass'],
  ];
  it.each(verdicts)('reads %j', (line, expected) => {
    expect(readVerdict(`# Verify\n\nSome words.\n${line}\nMore.\n`)).toMatchObject({ verdict: expected });
  });

  const refused: Array<[string, string]> = [
    ['Verdict: pass | fix', 'ambiguous-verdict'],
    ['Verdict: pass or fix', 'ambiguous-verdict'],
    ['Verdict: PASS/FIX', 'ambiguous-verdict'],
    ['Verdict: pass, nothing to fix', 'ambiguous-verdict'],
    ['Verdict: fix (pass once 2.3 is done)', 'ambiguous-verdict'],
    ['Verdict: passed', 'unreadable-verdict'],
    ['Verdict: fixed', 'unreadable-verdict'],
    ['Verdict: pending', 'unreadable-verdict'],
    ['Verdict:', 'unreadable-verdict'],
    ['**Verdict:** ✅', 'unreadable-verdict'],
    ['The verdict: pass', 'no-verdict'],
    ['Verdict — pass', 'no-verdict'],
    ['    Verdict: pass', 'no-verdict'],
    ['## Verdict\n\nPASS', 'no-verdict'],
  ];
  it.each(refused)('refuses %j as %s, with a reason that quotes the line', (line, problem) => {
    const reading = readVerdict(`# Verify\n${line}\n`);
    expect(reading).toMatchObject({ problem, reason: expect.stringContaining('Verdict: pass') });
    if (problem !== 'no-verdict') expect(reading).toMatchObject({ line: line.trim(), reason: expect.stringContaining(line.trim()) });
  });

  it('takes the last verdict line', () => {
    expect(readVerdict('Verdict: fix\n\nRe-checked 2.3.\n\nVerdict: pass\n')).toMatchObject({ verdict: 'pass' });
    expect(readVerdict('**Verdict: PASS**\n\nOn a second look:\nVerdict: fix\n')).toMatchObject({ verdict: 'fix' });
    // A last line that cannot be read is not saved by a readable one above it.
    expect(readVerdict('Verdict: pass\n\nVerdict: pass | fix\n')).toMatchObject({ problem: 'ambiguous-verdict' });
  });

  it('skips verdict lines inside code fences', () => {
    const text = 'Write the line as:\n```\nVerdict: pass\n```\n~~~~\n```\nVerdict: pass\n```\n~~~~\nVerdict: fix\n';
    expect(readVerdict(text)).toMatchObject({ verdict: 'fix' });
    expect(readVerdict('```\nVerdict: pass\n```\n')).toMatchObject({ problem: 'no-verdict' });
  });

  it('reads every verdict line, in order, with readVerdicts', () => {
    expect(readVerdicts('Verdict: fix\n\nVerdict: pass\nVerdict: maybe\n')).toEqual(['fix', 'pass']);
  });

  it('reads the lines the verify prompt tells the agent to write', () => {
    const lines = CHANGE_VERIFY.split('\n').filter((line) => /^Verdict: (pass|fix)$/.test(line));
    expect(lines).toEqual(['Verdict: pass', 'Verdict: fix']);
    for (const line of lines) expect(readVerdict(`Checked.\n\n${line}\n`)).toMatchObject({ verdict: line.slice('Verdict: '.length) });
  });
});
