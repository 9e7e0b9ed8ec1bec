// Config files that are one table of literals, read without a Lua state: `return { ... }` of
// strings, decimal numbers, booleans, nil, nested tables and `clm.secrets.NAME` (or
// `clm.secrets["NAME"]`). The files `clm setup` writes are such files, and most configurations
// stay so; a Lua state costs a start ~20 ms (compiling the wasm module, opening the libraries,
// the interpreter's first run). The value is what Lua gives: Lua 5.4's lexer (lua-strings.ts)
// and lua-value.ts's conversion (table-value.ts). Anything else — a call, an operator, a local,
// a global other than `clm`, a hexadecimal numeral, a positional nil, an explicit integer key, a
// key that is not valid UTF-8 — is declined (NotLiteral), and the load evaluates every file in
// Lua instead, so one load's files always come from one evaluator.

import type { ChunkOutcome, RunOptions } from './eval-protocol.js';
import { isAlnum, isAlpha, isDigit, Reader, Unlexable } from './lua-strings.js';
import { tableValue } from './table-value.js';

/** The chunk is not one table of literals: Lua evaluates the load. */
export class NotLiteral extends Error {}

const decline = (): never => {
  throw new NotLiteral();
};

const text = new TextDecoder();
const keyText = new TextDecoder('utf-8', { fatal: true });
/** Far below lua-value.ts's 64 levels, so no nesting it refuses is read here. */
const MAX_DEPTH = 32;
const RESERVED = new Set(
  'and break do else elseif end false for function goto if in local nil not or repeat return then true until while'.split(' '),
);
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A value that is not there (nil): its key is left out, as Lua leaves it out of the table. */
const NIL = Symbol('nil');
type Value = unknown;

class Parser {
  readonly r: Reader;
  constructor(
    src: Uint8Array,
    private readonly secrets: ReadonlyMap<string, Value>,
  ) {
    this.r = new Reader(src);
  }

  /** The next token's first byte, past whitespace and comments (-1 at the end). */
  peek(): number {
    this.r.skip();
    return this.r.at();
  }

  expect(c: number): void {
    if (this.peek() !== c) decline();
    this.r.pos++;
  }

  name(): string {
    if (!isAlpha(this.peek())) decline();
    let s = '';
    for (let c = this.r.at(); isAlnum(c); c = this.r.at()) {
      s += String.fromCharCode(c);
      this.r.pos++;
    }
    return s;
  }

  /** `return { ... } [;]` and nothing after it: the table, and its string keys' values. */
  chunk(): { value: Value; named: Map<string, Value> } {
    if (this.name() !== 'return' || this.peek() !== 0x7b) decline();
    const t = this.table(1);
    if (this.peek() === 0x3b) this.r.pos++;
    if (this.peek() !== -1) decline();
    return t;
  }

  table(depth: number): { value: Value; named: Map<string, Value> } {
    if (depth > MAX_DEPTH) decline();
    this.expect(0x7b);
    const named = new Map<string, Value>();
    const items: Value[] = [];
    for (let c = this.peek(); c !== 0x7d; c = this.peek()) {
      this.field(depth, named, items);
      const sep = this.peek();
      if (sep === 0x2c || sep === 0x3b) this.r.pos++;
      else if (sep !== 0x7d) decline();
    }
    this.r.pos++;
    // A string key that reads as a list index would become the same key as that item.
    if (items.length > 0) for (const k of named.keys()) if (/^[1-9]\d*$/.test(k)) decline();
    const entries: [string | number, Value][] = items.map((v, i) => [i + 1, v]);
    for (const [k, v] of named) entries.push([k, v]);
    return { value: tableValue(entries, named.size === 0), named };
  }

  /** One field: `Name = v`, `["key"] = v` or a positional value. */
  field(depth: number, named: Map<string, Value>, items: Value[]): void {
    const c = this.peek();
    let key: string | null = null;
    if (c === 0x5b && this.r.longBracket() === -1) {
      this.r.pos++;
      key = this.key();
      this.expect(0x5d);
      this.expect(0x3d);
    } else if (isAlpha(c)) {
      const at = this.r.pos;
      const word = this.name();
      if (this.peek() === 0x3d && this.r.at(1) !== 0x3d) {
        if (RESERVED.has(word)) decline();
        key = word;
        this.expect(0x3d);
      } else this.r.pos = at;
    }
    const v = this.value(depth);
    if (key === null) {
      if (v === NIL) decline(); // a hole in the list: Lua's conversion depends on the holes
      items.push(v);
    } else if (v === NIL) named.delete(key);
    else named.set(key, v);
  }

  /**
   * A key given as `[v]`, or a name looked up as `clm.secrets[v]`: a string only (number keys are
   * left to Lua), and valid UTF-8 (two keys that are not could meet under U+FFFD).
   */
  key(): string {
    const c = this.peek();
    let bytes: Uint8Array;
    if (c === 0x22 || c === 0x27) bytes = this.r.shortString();
    else if (c === 0x5b && this.r.longBracket() >= 0) bytes = this.r.longString(this.r.longBracket());
    else return decline();
    try {
      return keyText.decode(bytes);
    } catch {
      return decline();
    }
  }

  value(depth: number): Value {
    const c = this.peek();
    if (c === 0x22 || c === 0x27) return text.decode(this.r.shortString());
    if (c === 0x5b) {
      const level = this.r.longBracket();
      if (level < 0) decline();
      return text.decode(this.r.longString(level));
    }
    if (c === 0x7b) return this.table(depth + 1).value;
    if (c === 0x2d) return this.negative();
    if (isDigit(c) || (c === 0x2e && isDigit(this.r.at(1)))) return Number(this.numeral());
    const word = this.name();
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'nil') return NIL;
    if (word !== 'clm') decline();
    return this.secret();
  }

  /** `-` and a numeral: an integer's negation is an integer (-0 is 0), a float keeps its sign. */
  negative(): number {
    this.r.pos++;
    const t = this.numeral();
    const n = Number(t);
    return /^\d+$/.test(t) && n === 0 ? 0 : -n;
  }

  /** After `clm`: `.secrets.NAME` or `.secrets["NAME"]`, the value secrets.lua gave it (nil if none). */
  secret(): Value {
    this.expect(0x2e);
    if (this.name() !== 'secrets') decline();
    // clm.secrets[[x]] is a call with a long string, not an index.
    if (this.peek() === 0x5b && this.r.longBracket() >= 0) decline();
    let name: string;
    if (this.peek() === 0x2e) {
      this.r.pos++;
      name = this.name();
    } else {
      this.expect(0x5b);
      name = this.key();
      this.expect(0x5d);
    }
    return this.secrets.has(name) ? this.secrets.get(name) : NIL;
  }

  /** A numeral as Lua's lexer takes it (alphanumerics, dots, an exponent's sign); decimal only. */
  numeral(): string {
    if (!(isDigit(this.peek()) || this.r.at() === 0x2e)) decline();
    let t = '';
    for (;;) {
      const c = this.r.at();
      const sign = (c === 0x2b || c === 0x2d) && /[eE]$/.test(t);
      if (!(isAlnum(c) || c === 0x2e || sign)) break;
      t += String.fromCharCode(c);
      this.r.pos++;
    }
    if (!DECIMAL.test(t)) decline();
    return t;
  }
}

/**
 * The evaluator for a load whose files are all tables of literals: the RunChunk of load.ts.
 * secrets.lua's table (publishAsSecrets) is what `clm.secrets` gives the files after it.
 */
export class LiteralConfig {
  #secrets = new Map<string, Value>();

  run(src: Uint8Array, _chunkName: string, opts: RunOptions): ChunkOutcome {
    let t: { value: Value; named: Map<string, Value> };
    try {
      t = new Parser(src, this.#secrets).chunk();
    } catch (e) {
      if (e instanceof Unlexable) decline();
      throw e;
    }
    if (opts.publishAsSecrets) {
      // Only strings, numbers and booleans: a table under clm.secrets would nest below the config's own.
      for (const v of t.named.values()) if (typeof v === 'object') decline();
      this.#secrets = t.named;
    }
    return { ok: true, value: t.value, luaType: 'table' };
  }
}
