// The strings a Lua chunk spells out, decoded as Lua decodes them (all of Lua 5.4's escapes,
// long brackets with their newline rules, invalid UTF-8 as U+FFFD as lua-value.ts reads it):
// secrets.lua's run-time errors can quote them (`error("bad key " .. k)`), so its warning masks
// every one. Its lexer also reads the config files that are one table of literals
// (literal-config.ts).

const decoder = new TextDecoder();

/** The source is not what Lua's lexer accepts: no answer. */
export class Unlexable extends Error {}
const decline = (): never => {
  throw new Unlexable();
};

const isSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);
export const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
export const isAlpha = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
export const isAlnum = (c: number) => isAlpha(c) || isDigit(c);
const isNewline = (c: number) => c === 0x0a || c === 0x0d;
const hexValue = (c: number) => (isDigit(c) ? c - 0x30 : (c | 0x20) - 0x61 + 10);

/** Lua 5.4's lexer over a chunk's bytes, for the tokens clm reads itself. */
export class Reader {
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

/** Every string constant a Lua chunk spells out, or null when it cannot be lexed. */
export function chunkStrings(src: Uint8Array): Set<string> | null {
  const r = new Reader(src);
  const strings = new Set<string>();
  try {
    for (;;) {
      r.skip();
      const c = r.at();
      if (c < 0) return strings;
      if (c === 0x22 || c === 0x27) strings.add(decoder.decode(r.shortString()));
      else if (c === 0x5b && r.longBracket() >= 0) strings.add(decoder.decode(r.longString(r.longBracket())));
      else if (isAlpha(c))
        while (isAlnum(r.at())) r.pos++; // a name
      else if (isDigit(c))
        while (isAlnum(r.at()) || r.at() === 0x2e) r.pos++; // a numeral
      else r.pos++;
    }
  } catch (e) {
    if (e instanceof Unlexable) return null;
    throw e;
  }
}
