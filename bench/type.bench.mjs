// How long a text takes to reach a program through flume's tmux host, typed as a terminal would
// (`type(pane, text)`: keys in bursts of 200 characters, 100 ms apart) against one bracketed paste
// (`type(pane, text, { paste: true })`, which every built-in driver asks for), side by side in one
// run. The pane runs a small program that asks for bracketed paste as the agents' terminal UIs do,
// reads its input raw, shows "ready", and writes the time at which the whole text has arrived (markers aside).
// Sizes: a tell (100 characters), a prompt (2,000), a long brief (9,000). ROUNDS (default 8) of each.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT, fmt, median, temp } from './lib.mjs';

const { tmuxHost, killTmuxServer } = await import(join(PROJECT, 'dist/agents/panes/tmux.js'));

const dir = temp('flume-bench-type-');
const socket = join(dir, 'tmux.sock');
const host = tmuxHost({ socket });
const reader = join(dir, 'reader.mjs');
// Asks for bracketed paste, then counts what arrives, markers left out; at `want` characters, writes the time.
writeFileSync(
  reader,
  `import { writeFileSync } from 'node:fs';
const [want, out] = [Number(process.argv[2]), process.argv[3]];
process.stdin.setRawMode(true);
process.stdout.write('\\x1b[?2004hready');
let got = '';
process.stdin.on('data', (chunk) => {
  got += chunk.toString('utf8');
  if (got.replaceAll('\\x1b[200~', '').replaceAll('\\x1b[201~', '').length < want) return;
  writeFileSync(out, String(performance.timeOrigin + performance.now()));
  process.exit(0);
});
`,
);

const rounds = Number(process.env.ROUNDS ?? 8);
const sizes = [100, 2000, 9000];
const ways = { keys: {}, paste: { paste: true } };
const times = Object.fromEntries(Object.keys(ways).map((way) => [way, Object.fromEntries(sizes.map((size) => [size, []]))]));
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

try {
  for (let round = 0; round < rounds; round++) {
    for (const size of sizes) {
      // The two ways alternate which goes first, so neither always has the warmer machine.
      const order = round % 2 ? ['paste', 'keys'] : ['keys', 'paste'];
      for (const way of order) {
        const out = join(dir, `arrived-${way}-${size}-${round}`);
        const text = 'word '.repeat(Math.ceil(size / 5)).slice(0, size);
        const { pane } = await host.open({ title: `type-${way}`, cwd: dir, argv: [process.execPath, reader, String(size), out], env: { PATH: process.env.PATH ?? '' } });
        // Typed once the program reads raw and has asked for bracketed paste (it then shows "ready"):
        // before that the terminal's line discipline would take the text, and keep 4,095 characters of a line.
        for (let i = 0; i < 1000 && !(await host.capture(pane)).includes('ready'); i++) await sleep(20);
        const begun = performance.timeOrigin + performance.now();
        await host.type(pane, text, ways[way]);
        for (let i = 0; i < 3000 && !existsSync(out); i++) await sleep(5);
        if (!existsSync(out)) throw new Error(`${way}, ${size} characters: the text never arrived whole`);
        times[way][size].push(Number(readFileSync(out, 'utf8')) - begun);
        await host.close(pane).catch(() => undefined);
      }
    }
  }
} finally {
  await killTmuxServer(socket).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}

console.log(`text typed into a pane until the program has it whole: median of ${rounds}, side by side`);
console.log('| characters | as keys (bursts) | one bracketed paste | keys / paste |');
console.log('| --- | --- | --- | --- |');
for (const size of sizes) {
  const keys = median(times.keys[size]);
  const paste = median(times.paste[size]);
  console.log(`| ${size} | ${fmt(keys)} | ${fmt(paste)} | ${(keys / paste).toFixed(1)}× |`);
}
