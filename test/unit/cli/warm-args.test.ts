/** Which command lines the bin asks the supervisor to answer (core/cli/warm.ts), and as what. */
import { describe, expect, it } from 'vitest';
import { environmentOf, isWarmArgs, warmArgs } from '../../../core/cli/warm.js';

describe('the command lines asked warm', () => {
  it('status and kinds, their --json, --repo and (for status) one place, made independent of the folder', () => {
    expect(warmArgs(['status'], '/w')).toEqual(['status']);
    expect(warmArgs(['status', '--json'], '/w')).toEqual(['status', '--json']);
    expect(warmArgs(['status', '--json', 'fix/a'], '/w')).toEqual(['status', 'fix/a', '--json']);
    expect(warmArgs(['status', 'fix/a', '--repo', 'r'], '/w')).toEqual(['status', 'fix/a', '--repo', '/w/r']);
    expect(warmArgs(['status', '--repo=/abs', '--json'], '/w')).toEqual(['status', '--repo', '/abs', '--json']);
    expect(warmArgs(['kinds'], '/w')).toEqual(['kinds', '--repo', '/w']);
    expect(warmArgs(['kinds', '--json', '--repo', '../x'], '/w/y')).toEqual(['kinds', '--repo', '/w/x', '--json']);
  });

  it('anything else runs in its own process: other commands, flags, twice-given options, a place for kinds', () => {
    for (const argv of [
      [],
      ['launch', '--kind', 'fix'],
      ['tidy'],
      ['status', '--watch'],
      ['status', '--help'],
      ['status', '-h'],
      ['status', 'a', 'b'],
      ['status', '--json', '--json'],
      ['status', '--repo'],
      ['status', '--repo', '--json'],
      ['status', '--repo', 'a', '--repo', 'b'],
      ['status', ''],
      ['kinds', 'fix'],
      ['kinds', '--bogus'],
      ['--version'],
    ]) {
      expect(warmArgs(argv, '/w'), argv.join(' ')).toBeUndefined();
    }
  });

  it('the supervisor runs only arguments exactly as the bin sends them', () => {
    expect(isWarmArgs(['status', 'fix/a', '--repo', '/w/r', '--json'])).toBe(true);
    expect(isWarmArgs(['kinds', '--repo', '/w'])).toBe(true);
    expect(isWarmArgs(['kinds'])).toBe(false);
    expect(isWarmArgs(['status', '--repo', 'relative'])).toBe(false);
    expect(isWarmArgs(['status', '--json', 'fix/a'])).toBe(false);
    expect(isWarmArgs(['drop', 'fix/a'])).toBe(false);
  });

  it('the environment compared is what flume reads, as a digest', () => {
    const base = { HOME: '/h', PATH: '/bin', FLUME_STATE_DIR: '/s', ANTHROPIC_API_KEY: 'sk-secret', TERM: 'xterm' };
    expect(environmentOf(base)).toBe(environmentOf({ ...base, TERM: 'dumb', SHLVL: '3' }));
    // A command asked warm was routed here already; the supervisor never has FLUME_HOST.
    expect(environmentOf({ ...base, FLUME_HOST: 'far' })).toBe(environmentOf(base));
    for (const changed of [{ PATH: '/usr/bin' }, { FLUME_X: '1' }, { CLAUDE_CONFIG_DIR: '/c' }, { ANTHROPIC_API_KEY: 'sk-other' }, { XDG_STATE_HOME: '/x' }, { HERDR_PANE_ID: '1' }]) {
      expect(environmentOf({ ...base, ...changed }), JSON.stringify(changed)).not.toBe(environmentOf(base));
    }
    expect(environmentOf(base)).not.toContain('sk-secret');
    expect(environmentOf(base)).toMatch(/^[0-9a-f]{64}$/);
  });
});
