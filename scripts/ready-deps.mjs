// flume's own readying of a place (flume.config.ts, toolchain step "dependencies"), run in the place.
//
// A place is a worktree at <repo>/places/<kind>--<name>, inside the repository's folder, so the
// installed tree of the main checkout (<repo>/node_modules, nearly a gigabyte with three Claude Code
// builds) is an ancestor's. Installing it again in every place would take minutes and a registry, so:
// the nearest installed tree above the place is used, linked as the place's own node_modules (the
// test helpers and scripts/test.sh name `node_modules/…` from the place), but only when what npm last
// installed there (its hidden lockfile, node_modules/.package-lock.json) is exactly what the place's
// package-lock.json asks for. Otherwise (the branch changed its dependencies, or nothing is installed)
// the place gets its own tree: `npm ci --prefer-offline`, from npm's cache where it can.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const place = process.cwd();
const own = join(place, 'node_modules');

/** Why the tree at `modules` is not what `lock` asks for, or undefined when it is. */
function mismatch(lock, modules) {
  const hiddenFile = join(modules, '.package-lock.json');
  if (!existsSync(hiddenFile)) return `${hiddenFile} is missing`;
  const hidden = JSON.parse(readFileSync(hiddenFile, 'utf8')).packages ?? {};
  const wanted = lock.packages ?? {};
  for (const [key, entry] of Object.entries(wanted)) {
    if (key === '' || entry.link) continue;
    const installed = hidden[key];
    // Optional packages for other platforms are in the lockfile and rightly not installed.
    if (!installed) {
      if (entry.optional) continue;
      return `${key} is not installed`;
    }
    if (installed.version !== entry.version || installed.integrity !== entry.integrity) {
      return `${key} is ${installed.version}, the lockfile wants ${entry.version}`;
    }
  }
  for (const key of Object.keys(hidden)) if (!(key in wanted)) return `${key} is installed but not in the lockfile`;
  return undefined;
}

function main() {
  if (existsSync(own)) {
    console.log(`node_modules is already here (${own}); nothing to do`);
    return 0;
  }
  if (isLink(own)) {
    console.error(`${own} is a link to nothing: remove it, then retry`);
    return 1;
  }
  const lock = JSON.parse(readFileSync(join(place, 'package-lock.json'), 'utf8'));
  let why = 'no installed node_modules above the place';
  for (let dir = dirname(place); dir !== dirname(dir); dir = dirname(dir)) {
    const modules = join(dir, 'node_modules');
    if (!existsSync(modules)) continue;
    why = mismatch(lock, modules);
    if (why === undefined) {
      symlinkSync(relative(place, modules), own);
      console.log(`node_modules -> ${modules} (installed from this package-lock.json)`);
      return 0;
    }
    why = `${modules}: ${why}`;
    break;
  }
  console.log(`${why}: installing the place's own with npm ci`);
  const result = spawnSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { stdio: 'inherit' });
  return result.status ?? 1;
}

function isLink(path) {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

process.exitCode = main();
