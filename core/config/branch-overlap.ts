/**
 * Whether two kinds' branch patterns can make one branch. Two kinds that could would each take the
 * other's branch for its own, and a launch of one could then undo the other's; so a config with such
 * a pair is refused when it loads. A pattern is literal text with `{name}` slots, and a name is
 * `[a-z0-9]+(-[a-z0-9]+)*`: the question is whether two such regular languages meet, answered by a
 * walk over the pair of their automata (small: one state per pattern character and name step).
 */

/** A branch both patterns make (the shortest, for the error message), or undefined when none. */
export function sharedBranch(first: string, second: string): string | undefined {
  const a = tokens(first);
  const b = tokens(second);
  const alphabet = [...new Set([...'abcdefghijklmnopqrstuvwxyz0123456789-', ...first, ...second])];
  const start = (t: Token[]) => closure(t, { at: 0, step: NAME_START });
  const seen = new Set<string>();
  let frontier: Array<{ a: Position[]; b: Position[]; text: string }> = [{ a: start(a), b: start(b), text: '' }];
  // Breadth first: the first meeting found is a shortest shared branch.
  while (frontier.length) {
    const next: typeof frontier = [];
    for (const state of frontier) {
      if (state.a.some((p) => p.at === a.length) && state.b.some((p) => p.at === b.length)) return state.text;
      for (const char of alphabet) {
        const nextA = advance(a, state.a, char);
        const nextB = advance(b, state.b, char);
        if (!nextA.length || !nextB.length) continue;
        const key = `${keyOf(nextA)}|${keyOf(nextB)}`;
        if (seen.has(key)) continue;
        seen.add(key);
        next.push({ a: nextA, b: nextB, text: state.text + char });
      }
    }
    frontier = next;
  }
  return undefined;
}

/** A pattern character, or a `{name}` slot. Each slot is read as any name: a conservative answer. */
type Token = { char: string } | { name: true };

/** Where a walk stands in a pattern: before token `at`, `step` into a slot's name there. */
interface Position {
  at: number;
  step: NameStep;
}

// The name's automaton: nothing read yet, a letter or digit last, a "-" last. Only the second may end a name.
const NAME_START = 0;
const NAME_WORD = 1;
const NAME_DASH = 2;
type NameStep = typeof NAME_START | typeof NAME_WORD | typeof NAME_DASH;

function tokens(pattern: string): Token[] {
  const out: Token[] = [];
  pattern.split('{name}').forEach((text, index) => {
    if (index > 0) out.push({ name: true });
    for (const char of text) out.push({ char });
  });
  return out;
}

function advance(pattern: Token[], positions: Position[], char: string): Position[] {
  const out: Position[] = [];
  for (const { at, step } of positions) {
    const token = pattern[at];
    if (!token) continue;
    if ('char' in token) {
      if (token.char === char) out.push(...closure(pattern, { at: at + 1, step: NAME_START }));
      continue;
    }
    const word = /^[a-z0-9]$/.test(char);
    if (word) out.push(...closure(pattern, { at, step: NAME_WORD }));
    else if (char === '-' && step === NAME_WORD) out.push({ at, step: NAME_DASH });
  }
  return dedupe(out);
}

/** A position and those reached from it without reading: past a slot whose name may end here. */
function closure(pattern: Token[], position: Position): Position[] {
  const out = [position];
  const token = pattern[position.at];
  if (token && 'name' in token && position.step === NAME_WORD) out.push(...closure(pattern, { at: position.at + 1, step: NAME_START }));
  return out;
}

function dedupe(positions: Position[]): Position[] {
  const seen = new Map(positions.map((p) => [`${p.at}:${p.step}`, p]));
  return [...seen.values()];
}

function keyOf(positions: Position[]): string {
  return positions
    .map((p) => `${p.at}:${p.step}`)
    .sort()
    .join(',');
}
