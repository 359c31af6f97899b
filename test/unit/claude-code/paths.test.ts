import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configDir, encodeCwd, findTranscript, transcriptPath } from '../../../agents/claude-code/paths.js';

describe('configDir', () => {
  it('is $CLAUDE_CONFIG_DIR when set', () => {
    expect(configDir({ CLAUDE_CONFIG_DIR: '/tmp/cc', HOME: '/home/u' })).toBe('/tmp/cc');
  });

  it('is ~/.claude when unset or empty, as Claude Code treats an empty variable', () => {
    expect(configDir({ HOME: '/home/u' })).toBe('/home/u/.claude');
    expect(configDir({ CLAUDE_CONFIG_DIR: '', HOME: '/home/u' })).toBe('/home/u/.claude');
    expect(configDir({})).toBe(join(homedir(), '.claude'));
  });
});

describe('encodeCwd', () => {
  it('turns every character outside [a-zA-Z0-9] into "-", without collapsing', () => {
    expect(encodeCwd('/home/u/a.b_c')).toBe('-home-u-a-b-c');
    expect(encodeCwd('/a//b')).toBe('-a--b');
  });

  it('works per UTF-16 unit, as Claude Code does (an emoji is two dashes)', () => {
    expect(encodeCwd('/home/u/a.b_c/é😀')).toBe('-home-u-a-b-c----');
  });

  it('names the real worktree of the spotter fixture as its task files show', () => {
    // The fixture's own task output path holds Claude Code's name for this folder.
    expect(encodeCwd('/home/USER/projects/spotter-worktrees/spotter-dov')).toBe(
      '-home-USER-projects-spotter-worktrees-spotter-dov',
    );
  });

  it('cuts a name over 200 characters and adds the base-36 Java hash of the path', () => {
    const long = `/home/flume/${Array.from({ length: 8 }, (_, i) => `a-rather-long-folder-name-0${i}`).join('/')}`;
    const name = encodeCwd(long);
    // Computed by Claude Code 2.1.332's own function, taken from its bundle.
    expect(name).toBe(`${long.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200)}-74wtpy`);
    expect(encodeCwd('/x'.repeat(100))).toHaveLength(200);
  });
});

describe('transcriptPath', () => {
  it('joins config dir, projects, the encoded cwd and the session id', () => {
    expect(transcriptPath('/cfg', '/w/r.x', 'abc')).toBe('/cfg/projects/-w-r-x/abc.jsonl');
  });
});

describe('findTranscript', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flume-paths-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('finds the session in whatever project folder holds it', async () => {
    await mkdir(join(dir, 'projects', '-a'), { recursive: true });
    await mkdir(join(dir, 'projects', '-private-tmp-b'), { recursive: true });
    await writeFile(join(dir, 'projects', '-private-tmp-b', 's1.jsonl'), '{}\n');
    await writeFile(join(dir, 'projects', '-a', 's2.jsonl'), '{}\n');
    expect(await findTranscript(dir, 's1')).toBe(join(dir, 'projects', '-private-tmp-b', 's1.jsonl'));
  });

  it('prefers the newest when two folders hold the session', async () => {
    for (const name of ['-old', '-new']) {
      await mkdir(join(dir, 'projects', name), { recursive: true });
      await writeFile(join(dir, 'projects', name, 's.jsonl'), '{}\n');
    }
    await utimes(join(dir, 'projects', '-old', 's.jsonl'), new Date(1_000_000), new Date(1_000_000));
    expect(await findTranscript(dir, 's')).toBe(join(dir, 'projects', '-new', 's.jsonl'));
  });

  it('is undefined before the transcript exists, and without a projects folder', async () => {
    expect(await findTranscript(dir, 'nope')).toBeUndefined();
    await mkdir(join(dir, 'projects', '-a'), { recursive: true });
    expect(await findTranscript(dir, 'nope')).toBeUndefined();
  });
});
