/**
 * The documents hold to what the house asks of them: the README stays a page a newcomer reads, no
 * document or code comment names an issue of flume's own tracker (a reader has never seen them;
 * a document says what is), and every relative link in the README and under docs/ reaches a file.
 *
 * What counts as naming an issue: the word "issue" or "issues" followed by a number
 * (`ISSUE_NUMBER`). Another project's issue is cited as `owner/repo#N` or by its URL
 * (`…/issues/N`), neither of which the pattern takes, so those stay allowed.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT } from '../../helpers/repo.js';

const README_LIMIT = 250;
const ISSUE_NUMBER = /\bissues? #?\d+/i;
/** Folders that hold no document of flume's own: installed packages, build output, captured fixtures. */
const SKIPPED = new Set(['node_modules', 'dist', '.git', 'places', join('test', 'fixtures')]);

/** Every file under `dir` (relative to the project) whose name ends in one of `ends`. */
function filesUnder(dir: string, ends: string[]): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(join(PROJECT, at), { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name) && !SKIPPED.has(path)) walk(path);
      } else if (ends.some((end) => entry.name.endsWith(end))) found.push(path);
    }
  };
  walk(dir);
  return found.sort();
}

/** The lines of `text` that name an issue number, as `file:line: text`. */
function issueLines(file: string, text: string, offsetOf: (index: number) => number = () => 0): string[] {
  const hits: string[] = [];
  text.split('\n').forEach((line, index) => {
    if (ISSUE_NUMBER.test(line)) hits.push(`${file}:${offsetOf(index) + index + 1}: ${line.trim()}`);
  });
  return hits;
}

/** The comments of a TypeScript or JavaScript file, each with the line it starts on. */
function comments(source: string): Array<{ line: number; text: string }> {
  const found: Array<{ line: number; text: string }> = [];
  for (const match of source.matchAll(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g)) {
    found.push({ line: source.slice(0, match.index).split('\n').length - 1, text: match[0] });
  }
  return found;
}

/** The targets of a Markdown page's links, code blocks and code spans left out. */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]);
}

describe('the documents', () => {
  it(`keep the README within ${README_LIMIT} lines`, () => {
    const lines = readFileSync(join(PROJECT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines, 'README.md: move what a newcomer does not need first into docs/').toBeLessThanOrEqual(README_LIMIT);
  });

  it('name no issue number, in any document or code comment', () => {
    const hits: string[] = [];
    for (const file of filesUnder('.', ['.md'])) hits.push(...issueLines(file, readFileSync(join(PROJECT, file), 'utf8')));
    for (const file of filesUnder('.', ['.ts', '.mts', '.mjs', '.js'])) {
      for (const comment of comments(readFileSync(join(PROJECT, file), 'utf8'))) hits.push(...issueLines(file, comment.text, () => comment.line));
    }
    expect(hits, 'say what is, not which issue asked for it').toEqual([]);
  });

  it('link only to files that exist, from the README and every page under docs/', () => {
    const pages = ['README.md', ...filesUnder('docs', ['.md'])];
    expect(pages.length).toBeGreaterThan(1);
    const broken: string[] = [];
    for (const page of pages) {
      for (const target of linkTargets(readFileSync(join(PROJECT, page), 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
        const path = resolve(PROJECT, dirname(page), decodeURIComponent(target.split('#')[0]));
        if (relative(PROJECT, path).startsWith('..') || !statSync(path, { throwIfNoEntry: false })) broken.push(`${page}: ${target}`);
      }
    }
    expect(broken, 'links to nothing').toEqual([]);
  });

  it('list every decision in docs/decisions/README.md', () => {
    const listed = new Set(linkTargets(readFileSync(join(PROJECT, 'docs', 'decisions', 'README.md'), 'utf8')));
    const files = readdirSync(join(PROJECT, 'docs', 'decisions')).filter((name) => name.endsWith('.md') && name !== 'README.md');
    expect(files.filter((name) => !listed.has(name)), 'decisions missing from the index').toEqual([]);
  });
});
