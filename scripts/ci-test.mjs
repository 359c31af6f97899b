#!/usr/bin/env node
/**
 * CI's one retry, and the only one anywhere: `.ci/run` runs the README's `npm test` with
 * FLUME_TEST_OUTCOME set, then this with that file and npm test's exit code.
 *
 * - The run passed: prints its count and exits 0.
 * - Files failed: each is run once more, alone (`sh scripts/test.sh --project P FILE`). A file that
 *   passes alone lets the run pass, and each test that failed in it is printed at the end as
 *   `FLAKY: file › test` with its first run's errors: it is fixed in the next change
 *   (docs/testing.md). A file that fails alone fails CI.
 * - Anything else (no outcome, an error outside every file, an interrupted run) fails CI as it is.
 *
 * usage: node scripts/ci-test.mjs OUTCOME.json EXIT_CODE
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [outcomePath, codeText] = process.argv.slice(2);
const code = Number(codeText ?? 1);
const read = (path) => (existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined);
const count = (files) => {
  const tests = files.flatMap((f) => f.tests);
  return { passed: tests.filter((t) => t.state === 'passed').length, failed: tests.filter((t) => t.state === 'failed').length, skipped: tests.filter((t) => t.state === 'skipped').length };
};
const line = ({ passed, failed, skipped }) => `tests: ${passed} passed, ${failed} failed, ${skipped} skipped`;
const indent = (text) => text.replace(/^/gm, '    ');

const first = read(outcomePath);
if (code === 0) {
  if (first) console.log(line(count(first.files)));
  process.exit(0);
}
if (!first) {
  console.error(`ci: npm test exited ${code} and wrote no outcome (${outcomePath}): nothing to run again.`);
  process.exit(code || 1);
}
if (first.unhandled.length > 0 || first.reason === 'interrupted') {
  console.error(`ci: npm test exited ${code} with ${first.unhandled.length} error(s) outside every test${first.reason === 'interrupted' ? ', interrupted' : ''}: no file is run again.`);
  for (const error of first.unhandled) console.error(indent(error));
  process.exit(code || 1);
}
const failed = first.files.filter((f) => f.state === 'failed' || f.errors.length > 0 || f.tests.some((t) => t.state === 'failed'));
if (failed.length === 0) {
  console.error(`ci: npm test exited ${code}, yet no file failed: nothing to run again.`);
  process.exit(code || 1);
}

console.log(`\nci: ${failed.length} file(s) failed; each runs once more, alone.`);
const dir = mkdtempSync(join(tmpdir(), 'flume-ci-'));
const flaky = [];
const broken = [];
for (const file of failed) {
  const again = join(dir, `${flaky.length + broken.length}.json`);
  const started = Date.now();
  const run = spawnSync('sh', ['scripts/test.sh', '--project', file.project, file.file], {
    stdio: 'inherit',
    env: { ...process.env, FLUME_SKIP_BUILD: '1', FLUME_TEST_OUTCOME: again },
  });
  const alone = read(again)?.files.find((f) => f.file === file.file);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (run.status === 0 && alone && alone.tests.some((t) => t.state === 'passed')) flaky.push({ file, seconds });
  else broken.push({ file, alone, status: run.status });
}
rmSync(dir, { recursive: true, force: true });

const name = (file, test) => `${file.file} › ${test}${file.project === 'flume' ? '' : ` [${file.project}]`}`;
console.log('');
for (const { file, seconds } of flaky) {
  const tests = file.tests.filter((t) => t.state === 'failed');
  for (const test of tests.length > 0 ? tests : [{ name: '(the file itself)', errors: file.errors }]) {
    console.log(`FLAKY: ${name(file, test.name)}`);
    console.log(`  beside the others:\n${indent(test.errors.join('\n') || '(no error recorded)')}`);
    console.log(`  alone: passed (${seconds} s)`);
  }
}
for (const { file, alone, status } of broken) {
  const tests = (alone?.tests ?? file.tests).filter((t) => t.state === 'failed');
  for (const test of tests.length > 0 ? tests : [{ name: '(the file itself)', errors: alone?.errors ?? file.errors }]) {
    console.log(`FAILED: ${name(file, test.name)} (again alone${status === null ? ', killed' : ''})`);
    console.log(indent(test.errors.join('\n') || '(no error recorded)'));
  }
}
const total = count(first.files);
const stillFailed = broken.reduce((n, { file, alone }) => n + ((alone?.tests ?? file.tests).filter((t) => t.state === 'failed').length || 1), 0);
console.log(line({ passed: total.passed + total.failed - stillFailed, failed: stillFailed, skipped: total.skipped }));
if (broken.length > 0) process.exit(1);
console.log(`ci: every failed file passed alone: the run passes, and the ${flaky.length === 1 ? 'file above is' : 'files above are'} flaky, to be fixed in the next change.`);
