/**
 * What any user of the machine can read of its processes (`/proc/<pid>/cmdline`, as `ps` shows it),
 * what a process's environment holds, and where a value stands on disk: for the tests that prove no
 * secret leaks.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every process's argv on the machine, as `ps` shows it to any user. */
export function everyArgv(): Array<{ pid: number; argv: string }> {
  const out: Array<{ pid: number; argv: string }> = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      out.push({ pid: Number(name), argv: readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ') });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The processes whose argv holds any of the values. */
export function leaks(values: string[]): Array<{ pid: number; argv: string }> {
  return everyArgv().filter(({ argv }) => values.some((value) => argv.includes(value)));
}

/** Samples every argv until stopped (a leak may last only while a process starts); returns the leaks seen. */
export function watchArgv(values: string[]): () => Array<{ pid: number; argv: string }> {
  const seen: Array<{ pid: number; argv: string }> = [];
  const timer = setInterval(() => seen.push(...leaks(values)), 20);
  return () => {
    clearInterval(timer);
    return [...seen, ...leaks(values)];
  };
}

/** A process's environment, as the kernel holds it. */
export function environOf(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean)) {
    const at = entry.indexOf('=');
    env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return env;
}

/** Every file under `dir` whose text holds any of the values. */
export function filesHolding(dir: string, values: string[]): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    const text = readFileSync(file, 'utf8');
    if (values.some((value) => text.includes(value))) found.push(file);
  }
  return found;
}

/** A file's permission bits in octal, as `ls -l` would show them (`'600'`). */
export const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);
