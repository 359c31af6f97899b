/**
 * One supervisor, four repositories on the host: a good one whose place must keep moving, and one
 * whose config hangs, one whose config throws, one whose config changed after it was trusted. The
 * bad ones are named and passed over; none of them stalls the good one.
 */
import { describe, it } from 'vitest';
import { flume, makeRepo, remove, write } from '../../helpers/repo.js';
import { LONG, repoFor } from '../stages/helpers.js';
import { waitUntil } from '../../helpers/wait.js';

const GOOD_CONFIG = 'export default {};\n';

describe('the supervisor and bad configs', { timeout: LONG }, () => {
  it('moves a good repository\'s place while it names a hung, a throwing and a changed config', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, {});
    t.script({ onPrompt: [{ match: 'Make the change the brief asks for', actions: [{ run: [t.commit, 'one.txt', 'code'] }, { say: 'Committed one.txt.' }] }] });
    const hung = makeRepo({ config: GOOD_CONFIG });
    const throws = makeRepo({ config: GOOD_CONFIG });
    const changed = makeRepo({ config: GOOD_CONFIG, trusted: false });
    onTestFinished(() => [hung, throws, changed].forEach(remove));
    expect((await flume(['trust', '--repo', changed], { env: t.env })).code).toBe(0);
    for (const repo of [hung, throws, changed]) {
      const launched = await flume(['launch', '--repo', repo, '--kind', 'fix', '--name', 'x', '--brief', 'b', '--no-start', '--no-watch'], { env: t.env });
      expect(launched.code, launched.stderr).toBe(0);
    }
    // It never finishes, blocked rather than spinning: a spin would hold a core for the 40 s of the
    // probe's limit, slowing every other test (trust.test.ts has the spinning kind, with a short limit).
    write(hung, 'flume.config.ts', 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);\nexport default {};\n');
    write(throws, 'flume.config.ts', "throw new Error('config exploded');\nexport default {};\n");
    write(changed, 'flume.config.ts', '// edited after it was trusted\nexport default {};\n');
    // The helper trusts its repositories as they are now (hung and throws: trusted, and broken); changed is not its.
    await flume(['kinds', '--repo', t.repo], { env: t.env });

    const place = await t.launch('fix', 'one', 'Add one.txt.');
    expect(place.stage).toMatchObject({ name: 'code', delivery: 'taken' });
    // The hung config's probe takes 40 s to give up: long past the moment the good place moves.
    const watch = t.watch({ FLUME_CONFIG_TIMEOUT_MS: '40000' });
    t.open('code');
    await t.until('fix/one', (p) => p?.stage?.name === 'submission', 'the good place to move to submission', { timeoutMs: 35_000 });
    expect(t.record('fix--one').history).toEqual([expect.objectContaining({ name: 'code', delivered: expect.stringMatching(/^commit [0-9a-f]{7}$/) })]);
    // It moved while the hung config was still being probed: that repository was not waited on.
    expect(watch.output()).not.toContain(`${hung}: skipped`);
    // The throwing config's probe is a child process of its own: on a loaded machine it can end after
    // the good place moved, so its line is waited for (the hung one's 40 s are far longer).
    await waitUntil(() => watch.output().includes(`${throws}: skipped: BAD_CONFIG`) && watch.output().includes(`${changed}: skipped: UNTRUSTED_CONFIG`), 'the broken and the changed configs named');
    expect(watch.output()).toContain('config exploded');

    await waitUntil(() => watch.output().includes(`${hung}: skipped: CONFIG_HUNG`), 'the hung config named');
    expect(watch.output()).toContain('did not finish loading within 40 s');
    // Named once each, not once a pass.
    expect(watch.output().split(`${throws}: skipped`).length - 1).toBe(1);
    // Status names each bad repository (the hung one from the supervisor's record, at once).
    const started = Date.now();
    // With the supervisor's limit: a higher one would probe the hung config again (a raised limit may let it load).
    const status = JSON.parse((await flume(['status', '--json'], { env: { ...t.env, FLUME_CONFIG_TIMEOUT_MS: '40000' } })).stdout);
    // From the record: probing the hung config again would have taken its whole 40 s limit.
    expect(Date.now() - started).toBeLessThan(40_000);
    const errors = Object.fromEntries(status.repositories.map((r: any) => [r.root, r.error?.code]));
    expect(errors).toMatchObject({ [hung]: 'CONFIG_HUNG', [throws]: 'BAD_CONFIG', [changed]: 'UNTRUSTED_CONFIG' });
    expect(errors[t.repo]).toBeUndefined();
    expect(status.places.map((p: any) => p.id).sort()).toEqual(['fix/one', 'fix/x', 'fix/x', 'fix/x']);
  });
});

