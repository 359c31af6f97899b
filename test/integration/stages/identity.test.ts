import { describe, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LONG, repoFor, running } from './helpers.js';

// tmux numbers panes afresh in a new server, so after flume's tmux server restarted
// another place's agent can sit at an old handle's pane id. A handle is checked against the pane's
// identity (the `@flume-pane` mark set at open) before it is reported, typed into or closed.

const WORKING = { onPrompt: [{ actions: [{ say: 'Working on it.' }, { hang: true }] }] };

describe.concurrent('a pane id that belongs to another place', { timeout: LONG }, () => {
  it('reads as gone: status names no pane for it, tell types nothing into the other pane, stop leaves the other agent running', async ({ expect, onTestFinished }) => {
    const t = repoFor({ onTestFinished }, WORKING);
    const socket = join(t.state, 'tmux', 'flume.sock');
    const a = (await t.launch('fix', 'a', 'Work on a.')).stage.agent;
    const b = (await t.launch('fix', 'b', 'Work on b.')).stage.agent;
    expect([a.pane, b.pane]).toEqual(['%0', '%1']);

    // The server ends with both agents; new places' panes get the same ids in a new server.
    execFileSync('tmux', ['-S', socket, 'kill-server']);
    await t.until('fix/a', () => !running(a.pid) && !running(b.pid), 'the first agents to be gone');
    const c = (await t.launch('fix', 'c', 'Work on c.')).stage.agent;
    const d = (await t.launch('fix', 'd', 'Work on d.')).stage.agent;
    expect([c.pane, d.pane]).toEqual([a.pane, b.pane]);

    // b's handle as after a pid reuse: its pid now names a live process, d's agent. Only the pane's
    // own identity tells the two apart.
    const bFile = join(t.repo, '.git', 'flume', 'places', 'fix--b.json');
    const bRecord = JSON.parse(readFileSync(bFile, 'utf8'));
    bRecord.stage.agent.pid = d.pid;
    writeFileSync(bFile, JSON.stringify(bRecord, null, 2));

    const places = JSON.parse((await t.flume(['status', '--repo', t.repo, '--json'])).stdout).places as any[];
    const byId = Object.fromEntries(places.map((p) => [p.id, p.stage]));
    for (const gone of ['fix/a', 'fix/b']) {
      expect(byId[gone].agent.state, gone).toBe('exited');
      expect(byId[gone].agent.pane, gone).toBeUndefined();
      expect(byId[gone].state, gone).toBe('waiting');
    }
    expect(byId['fix/c'].agent).toMatchObject({ pane: '%0', state: 'working' });
    expect(byId['fix/d'].agent).toMatchObject({ pane: '%1', state: 'working' });
    const text = (await t.flume(['status', '--repo', t.repo])).stdout;
    expect(text.match(/tmux %0/g)).toHaveLength(1);
    expect(text.match(/tmux %1/g)).toHaveLength(1);

    // tell refuses; the other agents' transcripts and screens hold nothing of it.
    const transcripts = [c.transcriptPath, d.transcriptPath].map((path: string) => readFileSync(path, 'utf8'));
    for (const gone of ['fix/a', 'fix/b']) {
      const told = await t.flume(['tell', gone, 'Tell-for-the-gone-agent.']);
      expect(told.code, gone).not.toBe(0);
      expect(told.stdout + told.stderr, gone).toContain('AGENT_NOT_UP');
    }
    expect([c.transcriptPath, d.transcriptPath].map((path: string) => readFileSync(path, 'utf8'))).toEqual(transcripts);
    for (const pane of ['%0', '%1']) {
      expect(execFileSync('tmux', ['-S', socket, 'capture-pane', '-p', '-t', pane], { encoding: 'utf8' })).not.toContain('Tell-for-the-gone');
    }

    // stop of a gone agent ends nothing: the agents now in those panes still run.
    for (const gone of ['fix/a', 'fix/b']) expect((await t.flume(['stop', gone, '--force'])).code, gone).toBe(0);
    expect(running(c.pid) && running(d.pid)).toBe(true);
    expect(t.livePanes().map((p) => p.pane).sort()).toEqual(['%0', '%1']);
    expect((await t.view('fix/c')).stage.agent).toMatchObject({ pane: '%0', state: 'working' });
  });
});
