/**
 * Where Claude Code keeps an agent's transcript. The name of a project's folder is computed here only
 * as a fast path; `findTranscript` looks the session id up and is the answer to trust, since Claude
 * Code names the folder after its own idea of the working directory (which may be resolved
 * differently from the path flume started it in).
 */
import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Longest folder name Claude Code keeps whole; longer names are cut and given a hash suffix. */
const MAX_NAME = 200;

/**
 * Claude Code's config folder for an environment: `$CLAUDE_CONFIG_DIR`, else `~/.claude` (an empty
 * variable counts as unset, as it does for Claude Code, which also NFC-normalises the path).
 */
export function configDir(env: Record<string, string | undefined> = process.env): string {
  const dir = env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude');
  return dir.normalize('NFC');
}

/**
 * The folder name Claude Code gives a working directory under `projects/`: every character outside
 * `[a-zA-Z0-9]` becomes `-`, with no collapsing. A name over 200 characters is cut to 200 and given
 * `-<hash>`, where the hash is Java's `String.hashCode` of the original path (32-bit, over UTF-16
 * code units), made positive with `Math.abs` and written in base 36 — as Claude Code 2.1.332 does.
 */
export function encodeCwd(cwd: string): string {
  const name = cwd.replace(/[^a-zA-Z0-9]/g, '-');
  if (name.length <= MAX_NAME) return name;
  return `${name.slice(0, MAX_NAME)}-${Math.abs(javaHash(cwd)).toString(36)}`;
}

/** Where the transcript of a session started in `cwd` is written (the fast path; see findTranscript). */
export function transcriptPath(configDirectory: string, cwd: string, sessionId: string): string {
  return join(configDirectory, 'projects', encodeCwd(cwd), `${sessionId}.jsonl`);
}

/**
 * Finds a session's transcript whatever its project folder is called: the newest
 * `<configDir>/projects/*\/<sessionId>.jsonl`. Undefined until the file exists (Claude Code writes it
 * at the first prompt, not at start).
 */
export async function findTranscript(configDirectory: string, sessionId: string): Promise<string | undefined> {
  const projects = join(configDirectory, 'projects');
  let names: string[];
  try {
    names = await readdir(projects);
  } catch {
    return undefined;
  }
  const found = await Promise.all(
    names.map(async (name) => {
      const path = join(projects, name, `${sessionId}.jsonl`);
      try {
        const info = await stat(path);
        return info.isFile() ? { path, mtime: info.mtimeMs } : undefined;
      } catch {
        return undefined;
      }
    }),
  );
  // A session id is one file; were it ever in two folders, the one still being written is the live one.
  const newest = found
    .filter((f): f is { path: string; mtime: number } => f !== undefined)
    .sort((a, b) => b.mtime - a.mtime)[0];
  return newest?.path;
}

/** Java's String.hashCode: Claude Code's own hash for long folder names (`(h << 5) - h + c | 0`). */
function javaHash(text: string): number {
  let hash = 0;
  for (let i = 0; i < text.length; i++) hash = ((hash << 5) - hash + text.charCodeAt(i)) | 0;
  return hash;
}
