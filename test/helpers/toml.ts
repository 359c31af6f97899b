/**
 * A small TOML reader for the manifests flume ships (herdr-plugin.toml), written char by char:
 * comments, `[table]`, `[[array of tables]]`, bare keys, basic and literal strings, integers,
 * booleans and one-line arrays of those. Anything else is an error naming its line, so a manifest
 * that strays past this subset fails its test rather than being half read.
 */
export type TomlValue = string | number | boolean | TomlValue[] | TomlTable;
export interface TomlTable {
  [key: string]: TomlValue;
}

/** Parses TOML text into plain objects; throws `line N: …` on anything outside the subset. */
export function parseToml(text: string): TomlTable {
  const root: TomlTable = {};
  let table = root;
  text.split('\n').forEach((raw, index) => {
    const fail = (why: string): never => {
      throw new Error(`line ${index + 1}: ${why}: ${raw}`);
    };
    const line = new Cursor(raw, fail);
    line.space();
    if (line.done() || line.peek() === '#') return;
    if (line.peek() === '[') {
      const many = raw.trimStart().startsWith('[[');
      line.take(many ? 2 : 1);
      const name = line.key();
      line.expect(many ? ']]' : ']');
      line.end();
      if (many) {
        const list = (root[name] ??= []) as TomlTable[];
        if (!Array.isArray(list)) fail(`${name} is not an array of tables`);
        table = {};
        list.push(table);
      } else {
        if (name in root) fail(`${name} is defined twice`);
        table = root[name] = {};
      }
      return;
    }
    const key = line.key();
    line.space();
    line.expect('=');
    line.space();
    if (key in table) fail(`${key} is defined twice`);
    table[key] = line.value();
    line.end();
  });
  return root;
}

class Cursor {
  private at = 0;
  constructor(
    private readonly text: string,
    private readonly fail: (why: string) => never,
  ) {}

  done(): boolean {
    return this.at >= this.text.length;
  }
  peek(): string {
    return this.text[this.at] ?? '';
  }
  take(count = 1): string {
    const taken = this.text.slice(this.at, this.at + count);
    this.at += count;
    return taken;
  }
  space(): void {
    while (this.peek() === ' ' || this.peek() === '\t' || this.peek() === '\r') this.at += 1;
  }
  expect(word: string): void {
    if (this.take(word.length) !== word) this.fail(`expected ${word}`);
  }
  /** The rest of the line holds only space and a comment. */
  end(): void {
    this.space();
    if (!this.done() && this.peek() !== '#') this.fail('unexpected text');
  }
  key(): string {
    let key = '';
    while (isBare(this.peek())) key += this.take();
    if (key === '') this.fail('expected a key');
    return key;
  }
  value(): TomlValue {
    const c = this.peek();
    if (c === '"') return this.basic();
    if (c === "'") return this.literal();
    if (c === '[') return this.array();
    if (this.text.startsWith('true', this.at)) return (this.take(4), true);
    if (this.text.startsWith('false', this.at)) return (this.take(5), false);
    let digits = '';
    while (isDigit(this.peek()) || (digits === '' && this.peek() === '-')) digits += this.take();
    if (digits === '' || digits === '-') this.fail('expected a value');
    return Number(digits);
  }
  private basic(): string {
    this.take();
    let out = '';
    for (;;) {
      if (this.done()) this.fail('unterminated string');
      const c = this.take();
      if (c === '"') return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const escape = this.take();
      const simple: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' };
      if (escape in simple) out += simple[escape];
      else if (escape === 'u') out += String.fromCodePoint(Number.parseInt(this.take(4), 16));
      else this.fail(`unknown escape \\${escape}`);
    }
  }
  private literal(): string {
    this.take();
    let out = '';
    while (this.peek() !== "'") {
      if (this.done()) this.fail('unterminated string');
      out += this.take();
    }
    this.take();
    return out;
  }
  private array(): TomlValue[] {
    this.take();
    const items: TomlValue[] = [];
    for (;;) {
      this.space();
      if (this.peek() === ']') return (this.take(), items);
      items.push(this.value());
      this.space();
      if (this.peek() === ',') this.take();
      else if (this.peek() !== ']') this.fail('expected , or ] in an array');
    }
  }
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

function isBare(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || isDigit(c) || c === '_' || c === '-';
}
