/**
 * The fake herdr as one long-lived process per test (test/helpers/fake-herdr/index.ts starts it):
 * it answers each `herdr` call (fake-herdr.mjs `call`) over a TCP socket on 127.0.0.1, so a call
 * costs a bash client (`herdr`, beside this file) rather than a node start. It writes its port to
 * `$FAKE_HERDR_STATE/port` and ends when the test process that started it goes.
 *
 * A request: NUL-terminated fields, the caller's folder, the count of arguments, each argument, then
 * what the caller read on standard input. The answer: a bash snippet that prints the call's output
 * and exits with its code.
 */
import { createServer } from 'node:net';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { settle } from './fake-herdr.mjs';

const state = process.env.FAKE_HERDR_STATE;
if (!state) {
  process.stderr.write('fake herdr server: FAKE_HERDR_STATE is not set\n');
  process.exit(1);
}

/** A string as bash reads it back byte for byte: single-quoted. */
const quoted = (text) => `'${text.replace(/'/g, "'\\''")}'`;
const wait = (again) => new Promise((resolve) => setTimeout(() => resolve(again()), 50));

const server = createServer((socket) => {
  const chunks = [];
  let answered = false;
  socket.on('data', async (chunk) => {
    chunks.push(chunk);
    const fields = Buffer.concat(chunks).toString('utf8').split('\0');
    fields.pop(); // what follows the last NUL: nothing, or a field still coming
    const count = Number(fields[1]);
    if (answered || fields.length < 2 || fields.length < 3 + count) return;
    answered = true;
    const [cwd, , ...rest] = fields;
    const result = await settle({ argv: rest.slice(0, count), cwd, stdin: rest[count], env: process.env }, wait);
    const script = `printf %s ${quoted(result.stdout)}; printf %s ${quoted(result.stderr)} >&2; exit ${result.code}`;
    socket.end(script);
  });
  socket.on('error', () => undefined);
});

server.listen(0, '127.0.0.1', () => {
  const port = join(state, 'port');
  writeFileSync(`${port}.new`, `${server.address().port}\n`);
  renameSync(`${port}.new`, port);
  process.send?.('listening');
});
// The test process that started it went: so does it.
process.on('disconnect', () => process.exit(0));
