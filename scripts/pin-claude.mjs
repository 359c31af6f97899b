// After an install in flume's own checkout: `node_modules/.bin/claude` must be the pinned Claude Code
// (`@anthropic-ai/claude-code`), not one of the older versions installed beside it as npm aliases
// (`claude-code-<version>`), whose `bin` has the same name; npm links whichever it installs last.
// Run by `npm run build` and the test suite's setup, never by an install script: those would run
// (or, for `prepare`, be warned about by npm 11) in every install of the published package.
import { existsSync, lstatSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const bin = join('node_modules', '.bin', 'claude');
const target = join('..', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
if (existsSync(join('node_modules', '.bin', target))) {
  let current;
  try {
    current = lstatSync(bin).isSymbolicLink() ? readlinkSync(bin) : undefined;
  } catch {
    current = undefined;
  }
  if (current !== target) {
    rmSync(bin, { force: true });
    symlinkSync(target, bin);
  }
}
