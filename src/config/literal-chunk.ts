// A secrets.lua that is one literal table — `return { k = "v", ["k"] = 'v', [[long]], 1, -2.5,
// true, nil, { nested } }` with comments, the form `clm setup` writes — read without starting
// Lua, so a cached configuration can get its real secret values at start-up for free.
//
// It must give exactly what Lua gives: the same bytes for every string (all of Lua 5.4's escapes,
// long brackets with their newline rules), the same numbers, the same table conversion
// (plain-table.ts) and UTF-8 decoding as lua-value.ts. Whatever it does not understand fully it
// declines (null), and the caller evaluates the file in Lua instead: a name used as a value,
// an expression, a duplicate key, a hex or float key, deep nesting, a large file, anything Lua
// would reject. Declining is always correct, only slower.

import { PlainTable, type TableKey } from './plain-table.js';

/** Larger files are left to Lua (its memory cap would apply there; secrets files are tiny). */
const MAX_BYTES = 256 * 1024;
/** Deeper nesting is left to Lua (lua-value.ts refuses 64 levels). */
const MAX_DEPTH = 32;
/**
 * Lua's parser keeps a constructor's table and its pending list items in registers (255 per
 * function): past this estimate of the nested constructors' use, leave the verdict to Lua.
 */
const MAX_REGISTERS = 200;
/** Lua flushes a constructor's list items every 50 (LFIELDS_PER_FLUSH). */
const FLUSH = 50;

const RESERVED = new Set([
  'and',
  'break',
  'do',
  'else',
  'elseif',
  'end',
  'false',
  'for',
  'function',
  'goto',
  'if',
  'in',
  'local',
  'nil',
  'not',
  'or',
  'repeat',
  'return',
  'then',
  'true',
  'until',
  'while',
]);

// As lua-value.ts decodes strings (LuaMem.str): invalid sequences become U+FFFD.
const decoder = new TextDecoder();

class Decline extends Error {}
const decline = (): never => {
  throw new Decline();
};

const NIL = Symbol('nil');
type Value = unknown; // a converted value, or NIL

const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const isAlpha = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
const isAlnum = (c: number) => isAlpha(c) || isDigit(c);
const isNewline = (c: number) => c === 0x0a || c === 0x0d;
const hexValue = (c: number) => (isDigit(c) ? c - 0x30 : (c | 0x20) - 0x61 + 10);

class Reader {
  pos = 0;
  constructor(private readonly s: Uint8Array) {}

  at(i = 0): number {
    const p = this.pos + i;
    return p < this.s.length ? this.s[p]! : -1;
  }

  /** Past a newline sequence: \n, \r, \n\r or \r\n count as one (Lua's inclinenumber). */
  newline(): void {
    const c = this.at();
    this.pos++;
    const d = this.at();
    if (isNewline(d) && d !== c) this.pos++;
  }

  /**
   * At '[': the level of a long bracket `[==[` (its '='s); -1 for a plain '[', -2 for `[=` not
   * followed by '[' (an error in code, the start of a short comment after `--`). Does not move.
   */
  longBracket(): number {
    let n = 1;
    while (this.at(n) === 0x3d) n++;
    if (this.at(n) === 0x5b) return n - 1;
    return n === 1 ? -1 : -2;
  }

  /** The body of a long bracket at the current '[' of the given level, as bytes. */
  longString(level: number): Uint8Array {
    this.pos += level + 2;
    if (isNewline(this.at())) this.newline(); // a newline right after the opening is skipped
    const out: number[] = [];
    for (;;) {
      const c = this.at();
      if (c < 0) decline(); // unfinished long string or comment
      if (c === 0x5d) {
        let n = 1;
        while (this.at(n) === 0x3d) n++;
        if (n - 1 === level && this.at(n) === 0x5d) {
          this.pos += n + 1;
          return Uint8Array.from(out);
        }
        out.push(c);
        this.pos++;
      } else if (isNewline(c)) {
        out.push(0x0a);
        this.newline();
      } else {
        out.push(c);
        this.pos++;
      }
    }
  }

  /** Whitespace and comments. */
  skip(): void {
    for (;;) {
      const c = this.at();
      if (isSpace(c)) this.pos++;
      else if (c === 0x2d && this.at(1) === 0x2d) {
        this.pos += 2;
        if (this.at() === 0x5b) {
          const level = this.longBracket();
          if (level >= 0) {
            this.longString(level);
            continue;
          }
        }
        while (this.at() >= 0 && !isNewline(this.at())) this.pos++;
      } else return;
    }
  }

  /** The ASCII text from start to the current position. */
  text(start: number): string {
    return decoder.decode(this.s.subarray(start, this.pos));
  }

  name(): string {
    const start = this.pos;
    while (isAlnum(this.at())) this.pos++;
    return this.text(start);
  }

  /** A short string at the current quote, as bytes, with Lua 5.4's escapes. */
  shortString(): Uint8Array {
    const quote = this.at();
    this.pos++;
    const out: number[] = [];
    for (;;) {
      const c = this.at();
      if (c < 0 || isNewline(c)) decline(); // unfinished string
      this.pos++;
      if (c === quote) return Uint8Array.from(out);
      if (c !== 0x5c) {
        out.push(c);
        continue;
      }
      const e = this.at();
      switch (e) {
        case 0x61:
          out.push(0x07);
          this.pos++;
          break; // \a
        case 0x62:
          out.push(0x08);
          this.pos++;
          break; // \b
        case 0x66:
          out.push(0x0c);
          this.pos++;
          break; // \f
        case 0x6e:
          out.push(0x0a);
          this.pos++;
          break; // \n
        case 0x72:
          out.push(0x0d);
          this.pos++;
          break; // \r
        case 0x74:
          out.push(0x09);
          this.pos++;
          break; // \t
        case 0x76:
          out.push(0x0b);
          this.pos++;
          break; // \v
        case 0x5c:
        case 0x22:
        case 0x27:
          out.push(e);
          this.pos++;
          break; // \\ \" \'
        case 0x0a:
        case 0x0d:
          out.push(0x0a);
          this.newline();
          break; // backslash-newline
        case 0x78: {
          // \xXX: exactly two hex digits
          const h1 = this.at(1);
          const h2 = this.at(2);
          if (!isHex(h1) || !isHex(h2)) decline();
          out.push(hexValue(h1) * 16 + hexValue(h2));
          this.pos += 3;
          break;
        }
        case 0x7a: // \z: skip the whitespace that follows, newlines included
          this.pos++;
          while (isSpace(this.at())) {
            if (isNewline(this.at())) this.newline();
            else this.pos++;
          }
          break;
        case 0x75: {
          // \u{XXX}: up to 2^31, as (extended) UTF-8
          if (this.at(1) !== 0x7b) decline();
          this.pos += 2;
          if (!isHex(this.at())) decline();
          let r = 0;
          while (isHex(this.at())) {
            if (r > 0x7fffffff >>> 4) decline(); // UTF-8 value too large
            r = r * 16 + hexValue(this.at());
            this.pos++;
          }
          if (this.at() !== 0x7d) decline();
          this.pos++;
          out.push(...utf8Escape(r));
          break;
        }
        default: {
          if (!isDigit(e)) decline(); // invalid escape sequence (or end of input)
          let r = 0;
          for (let i = 0; i < 3 && isDigit(this.at()); i++) {
            r = r * 10 + (this.at() - 0x30);
            this.pos++;
          }
          if (r > 255) decline(); // decimal escape too large
          out.push(r);
        }
      }
    }
  }

  /**
   * A numeral, read as Lua's lexer reads one (hex digits, '.', exponent marks with a sign), then
   * accepted only in decimal form: the value and whether Lua holds it as an integer.
   */
  numeral(): { value: number; integer: boolean } {
    const start = this.pos;
    const hex = this.at() === 0x30 && (this.at(1) | 0x20) === 0x78;
    const expo = hex ? 0x70 : 0x65;
    for (;;) {
      const c = this.at();
      if ((c | 0x20) === expo) {
        this.pos++;
        if (this.at() === 0x2b || this.at() === 0x2d) this.pos++;
      } else if (isHex(c) || c === 0x2e) this.pos++;
      else break;
    }
    if (isAlpha(this.at())) decline(); // a numeral touching a letter is malformed
    const text = this.text(start);
    if (/^[0-9]+$/.test(text)) {
      // A decimal integer that does not fit 64 bits is a float in Lua: the same double either way.
      return { value: Number(text), integer: BigInt(text) <= 0x7fffffffffffffffn };
    }
    if (/^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(text)) return { value: Number(text), integer: false };
    return decline(); // hexadecimal, or malformed
  }
}

/** Lua's luaO_utf8esc: code points up to 0x7FFFFFFF in up to six bytes. */
function utf8Escape(x: number): number[] {
  if (x < 0x80) return [x];
  const out: number[] = [];
  let mfb = 0x3f; // largest value that fits in the first byte
  while (x > mfb) {
    out.unshift(0x80 | (x & 0x3f));
    x = Math.floor(x / 64);
    mfb >>= 1;
  }
  out.unshift(((~mfb << 1) & 0xff) | x);
  return out;
}

interface Field {
  key: TableKey;
  integer: boolean;
}

class Parser {
  readonly r: Reader;
  constructor(src: Uint8Array) {
    this.r = new Reader(src);
  }

  /** `return <table> [;]` and nothing else. */
  chunk(): unknown {
    const r = this.r;
    r.skip();
    if (!isAlpha(r.at()) || r.name() !== 'return') decline();
    r.skip();
    if (r.at() !== 0x7b) decline();
    const v = this.table(1, 0);
    r.skip();
    if (r.at() === 0x3b) {
      r.pos++;
      r.skip();
    }
    if (r.at() !== -1) decline();
    return v;
  }

  /** A literal value; NIL for nil. */
  value(depth: number, registers: number): Value {
    const r = this.r;
    const c = r.at();
    if (c === 0x22 || c === 0x27) return decoder.decode(r.shortString());
    if (c === 0x5b) {
      const level = r.longBracket();
      if (level < 0) decline(); // `[` cannot start a value unless it opens a long string
      return decoder.decode(r.longString(level));
    }
    if (c === 0x7b) return this.table(depth + 1, registers);
    if (isDigit(c) || (c === 0x2e && isDigit(r.at(1)))) return r.numeral().value;
    if (c === 0x2d && r.at(1) !== 0x2d) {
      r.pos++;
      r.skip();
      const d = r.at();
      if (!isDigit(d) && !(d === 0x2e && isDigit(r.at(1)))) decline();
      const n = r.numeral();
      // An integer's negation is exact in 64 bits and has no -0; a float's keeps the sign of 0.
      return n.integer && n.value === 0 ? 0 : -n.value;
    }
    if (isAlpha(c)) {
      const word = r.name();
      if (word === 'true') return true;
      if (word === 'false') return false;
      if (word === 'nil') return NIL;
    }
    return decline(); // a name, an expression, anything else
  }

  /** A key inside `[...]`: a string or a safe integer (what converts without surprises). */
  key(depth: number, registers: number): Field {
    const r = this.r;
    const c = r.at();
    const negative = c === 0x2d && r.at(1) !== 0x2d;
    if (isDigit(c) || negative) {
      const save = r.pos;
      if (negative) {
        r.pos++;
        r.skip();
      }
      if (!isDigit(r.at())) decline();
      const n = r.numeral();
      if (!n.integer || !Number.isSafeInteger(n.value)) decline();
      r.pos = save;
      const v = this.value(depth, registers) as number;
      return { key: v === 0 ? 0 : v, integer: true };
    }
    const v = this.value(depth, registers);
    if (typeof v !== 'string') decline(); // nil, boolean, float, table keys: left to Lua
    return { key: v as string, integer: false };
  }

  table(depth: number, registers: number): unknown {
    const r = this.r;
    if (depth > MAX_DEPTH) decline();
    r.pos++; // '{'
    const table = new PlainTable();
    const seen = new Set<string>();
    let index = 0; // list items so far
    const put = (f: Field, v: Value) => {
      const text = String(f.key);
      if (seen.has(text)) decline(); // a duplicate key (or 1 and "1"): Lua's order decides
      seen.add(text);
      if (v !== NIL) table.add(f.key, v, f.integer);
    };
    for (;;) {
      r.skip();
      if (r.at() === 0x7d) break;
      // This constructor's own register, its pending list items and a key or value in flight.
      const used = registers + 2 + Math.min(index, FLUSH);
      if (used > MAX_REGISTERS) decline();
      const c = r.at();
      const bracket = c === 0x5b ? r.longBracket() : 0;
      if (bracket === -2) decline(); // `[=` without a second '['
      if (bracket === -1) {
        r.pos++;
        r.skip();
        const f = this.key(depth, used);
        r.skip();
        if (r.at() !== 0x5d) decline();
        r.pos++;
        r.skip();
        if (r.at() !== 0x3d || r.at(1) === 0x3d) decline();
        r.pos++;
        r.skip();
        put(f, this.value(depth, used));
      } else if (isAlpha(c)) {
        const save = r.pos;
        const word = r.name();
        r.skip();
        if (r.at() === 0x3d && r.at(1) !== 0x3d && !RESERVED.has(word)) {
          r.pos++;
          r.skip();
          put({ key: word, integer: false }, this.value(depth, used));
        } else {
          r.pos = save; // true, false, nil as list items; anything else declines in value()
          put({ key: ++index, integer: true }, this.value(depth, used));
        }
      } else {
        put({ key: ++index, integer: true }, this.value(depth, used));
      }
      r.skip();
      const sep = r.at();
      if (sep === 0x2c || sep === 0x3b) {
        r.pos++;
        continue;
      }
      if (sep !== 0x7d) decline();
      break;
    }
    r.pos++; // '}'
    return table.value();
  }
}

/**
 * The value a chunk of the form `return { ... }` returns, converted as lua-value.ts converts it
 * in lenient mode, or null when the chunk is anything else (or anything this reader does not
 * fully understand).
 */
export function readLiteralChunk(src: Uint8Array): { value: unknown } | null {
  if (src.length > MAX_BYTES) return null;
  try {
    return { value: new Parser(src).chunk() };
  } catch (e) {
    if (e instanceof Decline) return null;
    throw e;
  }
}

/**
 * Every string constant and name a Lua chunk mentions (its strings decoded as Lua decodes
 * them), or null when it cannot be lexed. A configuration can only depend on a secret's exact
 * value by comparing it with (or indexing by) something, and a fixed something is in the source.
 */
export function chunkWords(src: Uint8Array): Set<string> | null {
  return lexWords(src, true);
}

/** Every string constant a Lua chunk spells out (names left out), or null when it cannot be lexed. */
export function chunkStrings(src: Uint8Array): Set<string> | null {
  return lexWords(src, false);
}

function lexWords(src: Uint8Array, names: boolean): Set<string> | null {
  const r = new Reader(src);
  const words = new Set<string>();
  try {
    for (;;) {
      r.skip();
      const c = r.at();
      if (c < 0) return words;
      if (c === 0x22 || c === 0x27) words.add(decoder.decode(r.shortString()));
      else if (c === 0x5b && r.longBracket() >= 0) words.add(decoder.decode(r.longString(r.longBracket())));
      else if (isAlpha(c)) {
        const name = r.name();
        if (names) words.add(name);
      } else if (isDigit(c)) while (isAlnum(r.at()) || r.at() === 0x2e) r.pos++;
      else r.pos++;
    }
  } catch (e) {
    if (e instanceof Decline) return null;
    throw e;
  }
}
