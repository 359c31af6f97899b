import { describe, it, expect } from 'vitest';
import { readVerdicts } from '../../../deliverables/index.js';

describe('readVerdicts', () => {
  const verdicts: Array<[string, string[]]> = [
    ['Verdict: pass', ['pass']],
    ['verdict: FIX', ['fix']],
    ['Verdict:pass.', ['pass']],
    ['**Verdict:** pass', ['pass']],
    ['**Verdict: fix**', ['fix']],
    ['Verdict: **pass**', ['pass']],
    ['_Verdict_: _fix_', ['fix']],
    ['## Verdict: pass', ['pass']],
    ['### **Verdict**: fix', ['fix']],
    ['- Verdict: pass', ['pass']],
    ['> Verdict: fix', ['fix']],
    ['   Verdict: pass   ', ['pass']],
    ['Verdict: pass\r', ['pass']],
  ];
  it.each(verdicts)('reads %j', (line, expected) => {
    expect(readVerdicts(`# Verify\n\nSome words.\n${line}\nMore.\n`)).toEqual(expected);
  });

  const notVerdicts = [
    'Verdict: pass | fix',
    'Verdict: pass or fix',
    'Verdict: passed',
    'Verdict: fixed',
    'The verdict: pass',
    'Verdict: pending',
    '    Verdict: pass',
    'Verdict:',
  ];
  it.each(notVerdicts)('reads no verdict in %j', (line) => {
    expect(readVerdicts(`# Verify\n${line}\n`)).toEqual([]);
  });

  it('skips verdict lines inside code fences', () => {
    const text = 'Write the line as:\n```\nVerdict: pass\n```\n~~~~\n```\nVerdict: pass\n```\n~~~~\nVerdict: fix\n';
    expect(readVerdicts(text)).toEqual(['fix']);
  });

  it('reads every verdict line, in order', () => {
    expect(readVerdicts('Verdict: fix\n\nVerdict: pass\n')).toEqual(['fix', 'pass']);
  });
});
