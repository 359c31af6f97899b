/** Asking the person at the terminal one yes/no question (only the CLI talks to a person). */
import { createInterface } from 'node:readline';

/** True when flume may ask: stdin and stderr are terminals and the caller did not ask for JSON. */
export function canAsk(json: boolean): boolean {
  return !json && Boolean(process.stdin.isTTY) && Boolean(process.stderr.isTTY);
}

/** Asks `question` on stderr and reads one line from stdin; true only for an answer starting with y. */
export function askYesNo(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  return new Promise((resolve) => {
    rl.question(question, (answer) => {
      resolve(/^\s*y/i.test(answer));
      rl.close();
    });
    // Input ended with no answer (Ctrl-D): no.
    rl.once('close', () => resolve(false));
  });
}
