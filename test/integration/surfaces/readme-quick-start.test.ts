/**
 * The README's quick start shows what `flume status` prints once a fix is launched and its agent is
 * at work. That block is taken from this test: a fix launched in a real repository, its agent the
 * scripted fake in a real tmux, a supervisor running, then `flume status`. The output, with the
 * repository's folder written as `~/src/app` and the pane's number as `%1`, must be the README's
 * block line for line. When status's words change, this test says so and the README follows.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { LONG, PROJECT, repoFor } from '../stages/helpers.js';

/** The block under the README's "Quick start" that follows its `flume status` line. */
function readmeStatusBlock(): string {
  const readme = readFileSync(join(PROJECT, 'README.md'), 'utf8');
  const section = /^## Quick start\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
  const block = /```text\n\$ flume status\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('the README\'s quick start has no ```text block starting with `$ flume status`');
  return block;
}

describe('the README\'s quick start', () => {
  it('shows what flume status prints for a fix whose agent works', { timeout: LONG }, async ({ expect, onTestFinished }) => {
    const expected = readmeStatusBlock();
    const t = repoFor({ onTestFinished }, { onPrompt: [{ actions: [{ say: 'Looking for a typo.' }, { hang: true }] }] });
    t.watch();
    await t.launch('fix', 'first-fix', 'Fix the first typo you find in README.md');
    await t.until('fix/first-fix', (p) => p?.stage?.agent?.state === 'working', 'the agent to work');
    // The executable, as the README's reader runs it.
    const shown = await t.flume(['status'], { process: true });
    expect(shown.code, shown.stderr).toBe(0);
    const normalised = shown.stdout.split(t.repo).join('~/src/app').replace(/ %\d+\)/g, ' %1)');
    expect(normalised).toBe(expected);
  });
});
