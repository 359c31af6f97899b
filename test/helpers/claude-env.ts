/**
 * A throwaway Claude Code installation for one test: a config dir pre-seeded so no first-run dialog
 * appears, the environment that points the real `claude` at the scripted Messages API and keeps it
 * from calling anywhere else, and the binary of the version under test (`FLUME_CLAUDE_VERSION`,
 * default the pinned one). Recipe: /work/shared/facts/claude-code.md and test/fixtures/claude-<version>/README.md.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The Claude Code version the project pins (`@anthropic-ai/claude-code` in devDependencies). */
export const PINNED_CLAUDE_VERSION = '2.1.332';

/**
 * Every Claude Code version the end-to-end suite runs against: the pinned one, then older ones
 * installed as npm aliases `claude-code-<version>` (devDependencies). vitest.config.ts makes one
 * project per selected version; see {@link selectedClaudeVersions}.
 */
export const CLAUDE_VERSIONS = [PINNED_CLAUDE_VERSION, '2.1.300', '2.1.250'] as const;

/**
 * The version this test process runs: `FLUME_CLAUDE_VERSION`, which vitest.config.ts sets per
 * project, else the pinned one.
 */
export const CLAUDE_VERSION: string = process.env.FLUME_CLAUDE_VERSION || PINNED_CLAUDE_VERSION;

/**
 * The versions a test run selects: `FLUME_CLAUDE_VERSIONS` (`all`, or a comma list of versions from
 * {@link CLAUDE_VERSIONS}); unset, all of them in CI (`CI=true`) and the pinned one elsewhere.
 */
export function selectedClaudeVersions(env: Record<string, string | undefined> = process.env): string[] {
  const asked = env.FLUME_CLAUDE_VERSIONS?.trim() || (env.CI && env.CI !== 'false' && env.CI !== '0' ? 'all' : PINNED_CLAUDE_VERSION);
  if (asked === 'all') return [...CLAUDE_VERSIONS];
  const list = asked.split(',').map((v) => v.trim()).filter(Boolean);
  const unknown = list.filter((v) => !(CLAUDE_VERSIONS as readonly string[]).includes(v));
  if (unknown.length > 0) throw new Error(`FLUME_CLAUDE_VERSIONS names ${unknown.join(', ')}; the suite knows ${CLAUDE_VERSIONS.join(', ')} (or all)`);
  return list;
}

/** The API key the tests use; Claude Code only checks its shape and that it was approved. */
export const TEST_API_KEY = 'sk-ant-test-flume-0000000000000000000000000000000000';

/** Claude Code's permission modes, as `permissions.defaultMode` and `--permission-mode` take them. */
export type PermissionMode = 'default' | 'acceptEdits' | 'plan' | 'auto' | 'dontAsk' | 'bypassPermissions';

/** Options for {@link makeClaudeEnv}. */
export interface ClaudeEnvOptions {
  /** `http://127.0.0.1:<port>` of the scripted Messages API. */
  baseUrl: string;
  /** Folders to mark trusted (for a worktree: the main checkout's root). Default: none. */
  trusted?: string[];
  /** `permissions.defaultMode` in settings.json. Default `acceptEdits`. */
  permissionMode?: PermissionMode;
  /** More keys merged over the seeded settings.json (hooks, for instance). */
  settings?: Record<string, unknown>;
  /** Parent of the temp dir. Default: the system temp dir. */
  parent?: string;
}

/** A seeded config dir with its environment; `cleanup()` removes it all. */
export interface ClaudeEnv {
  /** The temp dir holding `config/` and `tmp/` (and anything a test adds). */
  root: string;
  /** `CLAUDE_CONFIG_DIR`. */
  configDir: string;
  /** `TMPDIR` and `CLAUDE_CODE_TMPDIR`. */
  tmpDir: string;
  /** The pinned binary, its version checked. */
  binary: string;
  /** The variables set for claude (on top of the inherited ones). */
  vars: Record<string, string>;
  /** Inherited variables that must not reach claude. */
  unset: string[];
  /** The whole environment for a child process: the inherited one without `unset`, plus `vars`. */
  env: Record<string, string>;
  /** argv that starts claude with exactly this environment, for `tmux new-session` or a spawn. */
  command(args?: string[]): string[];
  /** Marks a folder trusted in `.claude.json`, keeping whatever claude wrote there. */
  trust(folder: string): void;
  /** Where the transcript of a session is, once it exists (the first prompt creates it). */
  findTranscript(sessionId: string): string | undefined;
  /** The transcript's lines, parsed; [] while the file does not exist. */
  readTranscript(sessionId: string): TranscriptLine[];
  /** Claude Code's own `sessions/<pid>.json` records, current ones only. */
  sessionStates(): SessionState[];
  cleanup(): void;
}

/** One line of a transcript; only the fields tests read are typed. */
export interface TranscriptLine {
  type: string;
  uuid?: string;
  sessionId?: string;
  isMeta?: boolean;
  subtype?: string;
  message?: { id?: string; role?: string; content: string | Array<{ type: string; [key: string]: unknown }>; stop_reason?: string | null };
  [key: string]: unknown;
}

/** `<config>/sessions/<pid>.json` as 2.1.2xx–2.1.332 write it (undocumented). */
export interface SessionState {
  pid: number;
  sessionId: string;
  cwd: string;
  status?: 'idle' | 'busy' | 'waiting' | string;
  version?: string;
  [key: string]: unknown;
}

/** Creates a temp config dir seeded per the recipe and returns its environment. */
export function makeClaudeEnv(options: ClaudeEnvOptions): ClaudeEnv {
  const binary = claudeBinary();
  const root = realpathSync(mkdtempSync(join(options.parent ?? tmpdir(), 'flume-claude-')));
  const configDir = join(root, 'config');
  const tmpDir = join(root, 'tmp');
  mkdirSync(configDir);
  mkdirSync(tmpDir);
  const claudeJson = join(configDir, '.claude.json');
  writeJson(claudeJson, {
    hasCompletedOnboarding: true,
    hasSeenAutoDefaultNudge: true,
    customApiKeyResponses: { approved: [TEST_API_KEY.slice(-20)], rejected: [] },
    projects: {},
  });
  writeJson(join(configDir, 'settings.json'), {
    permissions: { defaultMode: options.permissionMode ?? 'acceptEdits' },
    skipDangerousModePermissionPrompt: true,
    ...options.settings,
  });

  const vars: Record<string, string> = {
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: TEST_API_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_FORCE_SESSION_PERSISTENCE: '1',
    TERM: 'xterm-256color',
    TMPDIR: tmpDir,
    CLAUDE_CODE_TMPDIR: tmpDir,
  };
  // Anything Claude-related the developer's shell carries would change what the binary does.
  const unset = Object.keys(process.env).filter((k) => /^(CLAUDE|ANTHROPIC_)/.test(k) && !(k in vars));
  for (const name of ['CLAUDE_CODE_CHILD_SESSION', 'CLAUDECODE']) if (!unset.includes(name)) unset.push(name);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !unset.includes(k)) env[k] = v;
  Object.assign(env, vars);

  const claudeEnv: ClaudeEnv = {
    root,
    configDir,
    tmpDir,
    binary,
    vars,
    unset,
    env,
    command: (args = []) => ['env', ...unset.flatMap((k) => ['-u', k]), ...Object.entries(vars).map(([k, v]) => `${k}=${v}`), binary, ...args],
    trust(folder) {
      const data = JSON.parse(readFileSync(claudeJson, 'utf8')) as { projects?: Record<string, Record<string, unknown>> };
      const projects = (data.projects ??= {});
      projects[folder] = { ...projects[folder], hasTrustDialogAccepted: true };
      writeJson(claudeJson, data);
    },
    findTranscript(sessionId) {
      const projects = join(configDir, 'projects');
      if (!existsSync(projects)) return undefined;
      for (const dir of readdirSync(projects)) {
        const file = join(projects, dir, `${sessionId}.jsonl`);
        if (existsSync(file)) return file;
      }
      return undefined;
    },
    readTranscript(sessionId) {
      const file = claudeEnv.findTranscript(sessionId);
      if (!file) return [];
      // The last line may be half written while claude appends; drop what does not parse.
      return readFileSync(file, 'utf8').split('\n').flatMap((line) => {
        try {
          return line ? [JSON.parse(line) as TranscriptLine] : [];
        } catch {
          return [];
        }
      });
    },
    sessionStates() {
      const dir = join(configDir, 'sessions');
      if (!existsSync(dir)) return [];
      return readdirSync(dir).filter((f) => /^\d+\.json$/.test(f)).flatMap((f) => {
        try {
          return [JSON.parse(readFileSync(join(dir, f), 'utf8')) as SessionState];
        } catch {
          return [];
        }
      });
    },
    cleanup: () => rmSync(root, { recursive: true, force: true, maxRetries: 5 }),
  };
  for (const folder of options.trusted ?? []) claudeEnv.trust(folder);
  return claudeEnv;
}

const checkedBinaries = new Map<string, string>();

/**
 * The npm package that holds a version: the pinned one under its own name, the others under their
 * alias `claude-code-<version>` (npm nests each alias's platform package, so its binary is its own).
 */
export function claudePackage(version: string): string {
  return version === PINNED_CLAUDE_VERSION ? '@anthropic-ai/claude-code' : `claude-code-${version}`;
}

/**
 * A Claude Code binary from node_modules (default: the version under test); throws unless its
 * `--version` says that version, since a stale install would test the wrong program.
 */
export function claudeBinary(version: string = CLAUDE_VERSION): string {
  const known = checkedBinaries.get(version);
  if (known) return known;
  let pkg: string;
  try {
    pkg = createRequire(import.meta.url).resolve(`${claudePackage(version)}/package.json`);
  } catch {
    throw new Error(`claude-env: Claude Code ${version} is not installed (${claudePackage(version)}); run npm ci`);
  }
  const binary = join(dirname(pkg), 'bin', 'claude.exe');
  const reported = execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 20_000 }).trim();
  if (!reported.startsWith(`${version} `)) {
    throw new Error(`claude-env: ${binary} is "${reported}", the tests want ${version}; run npm ci`);
  }
  checkedBinaries.set(version, binary);
  return binary;
}

/**
 * The folder name Claude Code keeps a cwd's transcripts under: every character outside
 * `[a-zA-Z0-9]` becomes `-`. Names over 200 characters get a hash suffix this does not compute;
 * use {@link ClaudeEnv.findTranscript} for those.
 */
export function encodeCwd(cwd: string): string {
  return cwd.replace(/[^a-zA-Z0-9]/g, '-');
}

function writeJson(file: string, value: unknown): void {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}
