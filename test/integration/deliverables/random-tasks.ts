/**
 * Random tasks.md files for checking `countTasks` against the openspec CLI: every edge of the
 * 1.13.x task grammar (markers, indents, boxes, links, fences, comments, CRLF, tabs, unicode),
 * mixed at random from a seed, so a failure names a seed and a case that can be run again.
 */

import { prng } from '../../helpers/prng.js';

export { prng };

const INDENTS = ['', '', '', '', ' ', '  ', '   ', '    ', '      ', '\t', '\t\t', ' \t', '\u00a0', '\u3000', '\ufeff'];
const MARKERS = ['-', '-', '-', '*', '*', '+', '1.', '1)', '2.', '10)', '123456789.', '1234567890.', '0.', 'a.', '#', '>', '', '•', '- -', '1', '-.'];
const GAPS = ['', ' ', ' ', ' ', '  ', '\t', '\u00a0'];
const BOXES = [
  '[ ]', '[ ]', '[ ]', '[x]', '[x]', '[X]', '[]', '[~]', '[ x ]', '[ x]', '[x ]', '[  ]', '[\t]', '[ X  ]',
  '[xx]', '[-]', '[1]', '[é]', '[😀]', '[✓]', '[*]', '[\u00a0]', '[\u00a0x\u00a0]', '[ï]', '[WIP]',
  '[x](./a.md)', '[ ](./a.md)', '[ ][ref]', '[x][ref]', '[](x)', '[A](https://e.com)', '[ x ](y)', '[]]',
  '[', '[ ', 'x]', '[x]]', '[[x]]', '[x] (not a link)', '[ ]  [x]',
];
const AFTERS = ['', '', ' task', 'done', ' 1.1 Do the thing', ' ünïcødé 任务 ✨', ' <!-- note -->', ' `code`', ' (see [x](y))', '  ', '\t tab', ' - [x] again'];
const OTHERS = [
  '', '', '```', '```md', '~~~', '````', '<!--', '-->', '<!-- - [ ] hidden -->', '## 1. Setup', '# Tasks',
  'Some prose [x] here', '---', '* * *', '   ', '> - [x] quoted', '- plain item', '1. plain numbered', '\t',
];

/** One random tasks.md. */
export function randomTasksFile(random: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const eol = pick(['\n', '\n', '\n', '\r\n', '\r\n', 'mixed', '\r']);
  const count = Math.floor(random() * 26);
  let text = random() < 0.05 ? '\ufeff' : '';
  for (let i = 0; i < count; i++) {
    const line = random() < 0.65 ? pick(INDENTS) + pick(MARKERS) + pick(GAPS) + pick(BOXES) + pick(AFTERS) : pick(OTHERS);
    const end = eol === 'mixed' ? pick(['\n', '\r\n', '\r', '\n\n']) : eol;
    text += i === count - 1 && random() < 0.3 ? line : line + end;
  }
  return text;
}
