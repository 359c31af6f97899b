/**
 * A config that is data alone (JSON naming no plugin) runs no code, so no child process probes it
 * before it loads; a JSON config naming a plugin, and any config that is code, is probed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { flume, flumeEnv, makeRepo, remove, tempDir, trustMade, write } from '../../helpers/repo.js';
import { FAKE_CLAUDE } from '../../helpers/fake-claude/index.js';

const state = tempDir('flume-state-');
const env = flumeEnv(state);
const repos: string[] = [];
afterAll(() => [state, ...repos].forEach(remove));

const UNIT = { name: 'unit', stages: [{ name: 's', prompt: 'p', deliverable: 'commit' }] };

/** The repositories the host's probe record names. */
function probed(): string[] {
  const file = join(state, 'config-probes.json');
  return existsSync(file) ? Object.keys(JSON.parse(readFileSync(file, 'utf8')).repositories ?? {}) : [];
}

function repo(config: string, configFile: string, files: Record<string, string> = {}): string {
  const root = makeRepo({ config, configFile });
  for (const [name, text] of Object.entries(files)) write(root, name, text);
  repos.push(root);
  return root;
}

describe('a config that is data alone', () => {
  it('loads without a probe; a JSON config naming a plugin and a TypeScript config are probed', async () => {
    const json = repo(JSON.stringify({ kinds: [UNIT] }), '.flumerc.json');
    const pkg = repo(JSON.stringify({ name: 'x', flume: { kinds: [UNIT] } }), 'package.json');
    const plugin = repo(JSON.stringify({ plugins: ['./acme.mjs'] }), '.flumerc.json', {
      'acme.mjs': `export default { name: 'acme:kind', apply(flume) { flume.kinds.register('acme:kind', ${JSON.stringify({ ...UNIT, name: 'acme' })}); } };\n`,
    });
    const code = repo(`export default ${JSON.stringify({ kinds: [UNIT] })};\n`, 'flume.config.ts');
    await trustMade(state);
    for (const [root, kind] of [[json, 'unit'], [pkg, 'unit'], [plugin, 'acme'], [code, 'unit']]) {
      const result = await flume(['kinds', '--repo', root, '--json'], { env });
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).kinds.map((k: { name: string }) => k.name)).toContain(kind);
    }
    expect(probed().sort()).toEqual([plugin, code].sort());
  });
});

describe('kinds as data', () => {
  // What a TypeScript config declares that is data, written as JSON by a caller in any language.
  const CALLER = {
    name: 'unit',
    description: 'A crew unit.',
    branch: 'crew/{name}',
    advance: 'caller',
    whenNotReady: 'start',
    onBudget: 'stop',
    limits: { stuckAfter: '30m', tokens: 500000 },
    stages: [
      { name: 'settle', prompt: 'Settle {name}.', deliverable: 'commit', limits: { promptTimeout: '40s' } },
      { name: 'review', prompt: 'Review {name}.', deliverable: { type: 'report', path: 'review.md' }, advance: 'caller', model: 'opus' },
      { name: 'merge', prompt: 'Merge {branch}.', deliverable: 'landing', permissionMode: 'acceptEdits' },
    ],
  };
  const CONFIG = {
    kinds: [CALLER],
    ready: { setup: [{ name: 'marker', run: ['sh', '-c', 'echo ready > .ready'] }] },
    limits: { fixRounds: 1 },
    agents: { 'claude-code': { binary: FAKE_CLAUDE, args: ['--verbose'] } },
  };

  it('is declared in .flumerc.json or package.json\'s flume key, validated by the config\'s schema: kinds, advance, readying, agents\' options', async () => {
    const json = repo(JSON.stringify(CONFIG), '.flumerc.json');
    const pkg = repo(JSON.stringify({ name: 'x', flume: CONFIG }), 'package.json');
    const bad = repo(JSON.stringify({ kinds: [{ ...CALLER, advance: 'someone' }] }), '.flumerc.json');
    await trustMade(state);
    for (const root of [json, pkg]) {
      const kinds = await flume(['kinds', '--repo', root, '--json'], { env });
      expect(kinds.code, kinds.stdout + kinds.stderr).toBe(0);
      expect(JSON.parse(kinds.stdout).kinds.find((k: { name: string }) => k.name === 'unit')).toMatchObject({
        advance: 'caller',
        branch: 'crew/{name}',
        stages: [{ name: 'settle', deliverable: 'commit' }, { name: 'review', deliverable: 'report', gate: true }, { name: 'merge', deliverable: 'landing' }],
      });
      const fix = JSON.parse((await flume(['kinds', '--repo', root, '--json'], { env })).stdout).kinds.find((k: { name: string }) => k.name === 'fix');
      expect(fix.advance).toBe('flume');
      const plan = await flume(['launch', '--repo', root, '--kind', 'unit', '--name', 'u', '--brief', 'b', '--dry-run', '--json'], { env });
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
      const dry = JSON.parse(plan.stdout);
      expect(dry.place.branch).toBe('crew/u');
      expect(dry.ready.steps.map((s: { label: string }) => s.label)).toEqual(['marker']);
      expect(dry.stage).toBeNull();
      expect(dry.notes).toContain("no stage starts: unit's caller starts each of its stages (flume stage, flume next)");
      // The agents' options reach the agent's command line, as a stage flume starts shows.
      const fixPlan = await flume(['launch', '--repo', root, '--kind', 'fix', '--name', 'f', '--brief', 'b', '--dry-run', '--json'], { env });
      expect(fixPlan.code, fixPlan.stdout + fixPlan.stderr).toBe(0);
      expect(JSON.parse(fixPlan.stdout).stage.agent.plan.command).toContain('--verbose');
    }
    const refused = await flume(['kinds', '--repo', bad, '--json'], { env });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: 'BAD_CONFIG', message: expect.stringContaining('advance') });
  });
});
