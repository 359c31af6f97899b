import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { countTasks } from '../../../deliverables/index.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/openspec-1.13.2/${name}`, import.meta.url), 'utf8');

describe('countTasks', () => {
  it('counts the sample tasks.md as openspec 1.13.2 reported it (5 of 14)', () => {
    const listed = JSON.parse(fixture('list.json')).changes.find((change: { name: string }) => change.name === 'add-widget');
    expect(countTasks(fixture('tasks.sample.md'))).toEqual({ done: listed.completedTasks, total: listed.totalTasks });
    expect(countTasks(fixture('tasks.sample.md'))).toEqual({ done: 5, total: 14 });
  });

  it('counts the sample differently from the grammars openspec dropped (why the copy matters)', () => {
    const text = fixture('tasks.sample.md');
    const count = (task: RegExp, done: RegExp) => {
      const lines = text.split('\n').filter((line) => task.test(line));
      return { done: lines.filter((line) => done.test(line)).length, total: lines.length };
    };
    expect(count(/^[-*]\s+\[[\sx]\]/i, /^[-*]\s+\[x\]/i)).toEqual({ done: 3, total: 6 });
    expect(count(/^\s*[-*]\s*\[([\sxX])\]\s*(.*)/, /^\s*[-*]\s*\[[xX]\]/)).toEqual({ done: 4, total: 9 });
  });

  const cases: Array<[string, string, number, number]> = [
    ['a missing or empty file', '', 0, 0],
    ['dash, star, plus, numbered markers', '- [x] a\n* [ ] b\n+ [X] c\n1. [ ] d\n2) [x] e', 3, 5],
    ['an ordered marker of ten digits is no marker', '1234567890. [x] a\n123456789. [x] b', 1, 1],
    ['indented sub-tasks and tabs count', '  - [ ] a\n\t- [x] b\n        * [ ] c', 1, 3],
    ['no space after the marker or the box', '-[x]done\n1.[ ]x', 1, 2],
    ['a box holds one mark; only x is done', '- [~] a\n- [] b\n- [ x ] c\n- [-] d\n- [1] e', 1, 5],
    ['two marks in a box are no task', '- [xx] a\n- [WIP] b\n- [x x] c', 0, 0],
    ['a one-character box followed by ( or [ is a link', '- [x](./a.md)\n- [A](https://e.com)\n- [x][ref]\n- [](x)', 0, 0],
    ['a whitespace-only box before ( or [ is still an open task', '- [ ](./a.md)\n- [ ][ref]', 0, 2],
    ['code fences and HTML comments count', '```\n- [x] in fence\n```\n<!--\n- [ ] in comment\n-->', 1, 2],
    ['CRLF lines count', '- [x] a\r\n- [ ] b\r\n- [ ]\r\n', 1, 3],
    ['a CR-only file is one line', '- [x] a\r- [ ] b\r', 1, 1],
    ['a surrogate pair is two code units, so no mark', '- [😀] a\n- [é] b', 0, 1],
    ['unicode whitespace is whitespace to the CLI too', '\u00a0- [\u00a0x\u00a0] a\n\ufeff- [ ] b', 1, 2],
    ['prose, headings and quotes are no tasks', '## 1. Setup\nSee [x] here\n> - [x] quoted\n• [x] bullet', 0, 0],
  ];
  it.each(cases)('%s', (_name, text, done, total) => {
    expect(countTasks(text)).toEqual({ done, total });
  });
});
