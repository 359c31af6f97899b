import { describe, expect, it } from 'vitest';
import { printedCommand, SECRET_NAME } from '../../../agents/printed.js';
import { withoutPasteMarkers } from '../../../core/drivers/pane-env.js';
import { shellLine } from '../../../core/cli/output.js';

describe('the printed command', () => {
  it('refers to a secret the caller does not have as $NAME, shows plain values, and unsets what it must', () => {
    const base = { PATH: '/bin', CLAUDECODE: '1', GITHUB_TOKEN: 'ghp_same' };
    const env = { PATH: '/bin', GITHUB_TOKEN: 'ghp_same', ANTHROPIC_API_KEY: 'sk-ant-from-config', CLAUDE_CONFIG_DIR: '/c', MY_SECRET: 's3' };
    const command = printedCommand(env, ['claude', '--session-id', 'x'], { base });
    expect(command).toEqual(['env', '-u', 'CLAUDECODE', 'ANTHROPIC_API_KEY="$ANTHROPIC_API_KEY"', 'CLAUDE_CONFIG_DIR=/c', 'MY_SECRET="$MY_SECRET"', 'claude', '--session-id', 'x']);
    expect(shellLine(command)).toBe('env -u CLAUDECODE ANTHROPIC_API_KEY="$ANTHROPIC_API_KEY" CLAUDE_CONFIG_DIR=/c MY_SECRET="$MY_SECRET" claude --session-id x');
    // Only a reference to the same name stays unquoted; anything else with a $ is quoted.
    expect(shellLine(['A="$B"', 'say $HOME'])).toBe(`'A="$B"' 'say $HOME'`);
  });

  it('takes names that say they are secrets for secrets, and others for plain values', () => {
    for (const name of ['ANTHROPIC_API_KEY', 'GITHUB_TOKEN', 'GH_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'NPM_AUTH_TOKEN', 'DB_PASSWORD', 'OPENAI_APIKEY', 'GOOGLE_APPLICATION_CREDENTIALS', 'ANTHROPIC_AUTH_TOKEN']) {
      expect(SECRET_NAME.test(name), name).toBe(true);
    }
    for (const name of ['PATH', 'HOME', 'CLAUDE_CONFIG_DIR', 'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_FORCE_SESSION_PERSISTENCE', 'TERM', 'KEYBOARD_LAYOUT']) {
      expect(SECRET_NAME.test(name), name).toBe(false);
    }
  });
});

describe('paste markers', () => {
  it('are stripped until none is left, however deep they are nested', () => {
    expect(withoutPasteMarkers('a\x1b[20\x1b[200~1~b')).toBe('ab');
    expect(withoutPasteMarkers('a\x1b[20\x1b[20\x1b[200~0~1~b\x1b[201~')).toBe('ab');
    expect(withoutPasteMarkers('keep \x1b[21~ and \x1b[20')).toBe('keep \x1b[21~ and \x1b[20');
  });
});
