// Terminal input bytes to events: keys (CSI and SS3 forms with modifiers, CSI-u and
// modifyOtherKeys), typed text, bracketed paste as one event, the mouse wheel (SGR encoding),
// focus, cursor position reports. UTF-8 may be split across reads; a lone Esc is told apart from
// the start of a sequence by a short wait.

export interface Key {
  /** 'enter', 'tab', 'backspace', 'delete', 'insert', 'escape', 'space', 'up', 'down', 'left', 'right',
   * 'home', 'end', 'pageup', 'pagedown', 'f1'…'f20', a character ('a', '/', 'é') for keys typed with
   * Ctrl, Alt or Super, or 'unknown'. */
  name: string;
  ctrl: boolean;
  alt: boolean;
  shift: boolean;
  /** Super / Meta (the fourth modifier bit). */
  meta: boolean;
  /** The bytes as received. */
  sequence: string;
}

export type InputEvent =
  | { type: 'key'; key: Key }
  | { type: 'text'; text: string }
  | { type: 'paste'; text: string }
  | { type: 'wheel'; delta: -1 | 1; row: number; col: number; shift: boolean; alt: boolean; ctrl: boolean }
  | { type: 'focus'; focused: boolean }
  | { type: 'cursor'; row: number; col: number };

/** 'ctrl+a', 'shift+enter', 'alt+b', 'pageup': how to write a key in a binding. */
export function keyId(k: Key): string {
  return `${k.ctrl ? 'ctrl+' : ''}${k.alt ? 'alt+' : ''}${k.shift ? 'shift+' : ''}${k.meta ? 'super+' : ''}${k.name}`;
}

/** Whether an event is the key `id` (as written by keyId). */
export function isKey(ev: InputEvent, id: string): boolean {
  return ev.type === 'key' && keyId(ev.key) === id;
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface KeyParserOptions {
  /** How long an Esc waits for the rest of a sequence (default 25 ms). */
  escapeTimeoutMs?: number;
  /** How long a paste whose end marker never comes waits before it is delivered anyway (default 500 ms). */
  pasteTimeoutMs?: number;
  timers?: Timers;
}

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

const TILDE: Record<string, string> = {
  1: 'home',
  2: 'insert',
  3: 'delete',
  4: 'end',
  5: 'pageup',
  6: 'pagedown',
  7: 'home',
  8: 'end',
  11: 'f1',
  12: 'f2',
  13: 'f3',
  14: 'f4',
  15: 'f5',
  17: 'f6',
  18: 'f7',
  19: 'f8',
  20: 'f9',
  21: 'f10',
  23: 'f11',
  24: 'f12',
  25: 'f13',
  26: 'f14',
  28: 'f15',
  29: 'f16',
  31: 'f17',
  32: 'f18',
  33: 'f19',
  34: 'f20',
};
const LETTER: Record<string, string> = {
  A: 'up',
  B: 'down',
  C: 'right',
  D: 'left',
  H: 'home',
  F: 'end',
  E: 'clear',
  P: 'f1',
  Q: 'f2',
  R: 'f3',
  S: 'f4',
  M: 'enter',
};
/** Kitty keyboard protocol codes of keypad and navigation keys; the modifier keys alone (57441–57454) are ignored. */
const KITTY_KEYS: Record<number, string> = {
  57399: '0',
  57400: '1',
  57401: '2',
  57402: '3',
  57403: '4',
  57404: '5',
  57405: '6',
  57406: '7',
  57407: '8',
  57408: '9',
  57409: '.',
  57410: '/',
  57411: '*',
  57412: '-',
  57413: '+',
  57414: 'enter',
  57415: '=',
  57416: ',',
  57417: 'left',
  57418: 'right',
  57419: 'up',
  57420: 'down',
  57421: 'pageup',
  57422: 'pagedown',
  57423: 'home',
  57424: 'end',
  57425: 'insert',
  57426: 'delete',
};
const SS3_TEXT: Record<string, string> = {
  j: '*',
  k: '+',
  l: ',',
  m: '-',
  n: '.',
  o: '/',
  p: '0',
  q: '1',
  r: '2',
  s: '3',
  t: '4',
  u: '5',
  v: '6',
  w: '7',
  x: '8',
  y: '9',
  X: '=',
};

const key = (name: string, sequence: string, mods = 0): InputEvent => ({
  type: 'key',
  key: { name, sequence, shift: !!(mods & 1), alt: !!(mods & 2), ctrl: !!(mods & 4), meta: !!(mods & 8) },
});

/** A character code as a key: control characters become Ctrl+letter and friends. */
function controlKey(c: number, seq: string, mods = 0): InputEvent {
  if (c === 0x0d) return key('enter', seq, mods);
  if (c === 0x09) return key('tab', seq, mods);
  if (c === 0x7f || c === 0x08) return key('backspace', seq, mods);
  if (c === 0x1b) return key('escape', seq, mods);
  if (c === 0x00) return key('space', seq, mods | 4);
  if (c === 0x20) return key('space', seq, mods);
  if (c >= 0x01 && c <= 0x1a) return key(String.fromCharCode(c + 0x60), seq, mods | 4);
  if (c >= 0x1c && c <= 0x1f) return key('\\]^_'[c - 0x1c]!, seq, mods | 4);
  return key(String.fromCodePoint(c), seq, mods);
}

/** Index past the escape sequence at b[i], or -1 when more bytes are needed. */
function sequenceEnd(b: string, i: number): number {
  if (i + 1 >= b.length) return -1;
  const c = b[i + 1]!;
  if (c === '[') return csiEnd(b, i);
  if (c === 'O') return ss3End(b, i);
  if (c === ']' || c === 'P' || c === '_' || c === '^' || c === 'X') return stringEnd(b, i);
  if (c === '\x1b') {
    // ESC ESC …: Alt with a sequence, or Alt+Esc.
    if (i + 2 >= b.length) return -1;
    return b[i + 2] === '[' || b[i + 2] === 'O' ? sequenceEnd(b, i + 1) : i + 2;
  }
  // ESC + one character (a whole code point): Alt+key.
  const cp = b.codePointAt(i + 1)!;
  return i + 1 + (cp > 0xffff ? 2 : 1);
}

function csiEnd(b: string, i: number): number {
  const n = b.length;
  if (i + 2 >= n) return -1;
  if (b[i + 2] === 'M') return i + 6 <= n ? i + 6 : -1; // X10 mouse: three raw bytes follow
  if (b[i + 2] === '[') return i + 4 <= n ? i + 4 : -1; // Linux console F1–F5
  let j = i + 2;
  while (j < n && b.charCodeAt(j) >= 0x30 && b.charCodeAt(j) <= 0x3f) j++;
  while (j < n && b.charCodeAt(j) >= 0x20 && b.charCodeAt(j) <= 0x2f) j++;
  return j >= n ? -1 : j + 1;
}

function ss3End(b: string, i: number): number {
  const n = b.length;
  if (i + 2 >= n) return -1;
  let j = i + 2;
  while (j < n && b.charCodeAt(j) >= 0x30 && b.charCodeAt(j) <= 0x39) j++; // ESC O 5 A (some terminals)
  return j < n ? j + 1 : -1;
}

/** OSC, DCS, APC, PM, SOS (terminal replies): up to BEL or ST. */
function stringEnd(b: string, i: number): number {
  const n = b.length;
  for (let j = i + 2; j < n; j++) {
    if (b[j] === '\x07') return j + 1;
    if (b[j] === '\x1b' && j + 1 < n && b[j + 1] === '\\') return j + 2;
  }
  return -1;
}

/** A CSI modifier parameter (1 + bits) as the bits (shift 1, alt 2, ctrl 4, super 8). */
function modParam(p: string | undefined): number {
  const m = p === undefined || p === '' ? 1 : Number(p.split(':')[0]);
  return Number.isFinite(m) && m >= 1 ? (m - 1) & 15 : 0;
}

/** Wheel events of a mouse report (button b, 1-based x, y); other buttons and motion are not wanted. */
function wheel(b: number, x: number, y: number): InputEvent | null {
  if (!(b & 64) || (b & 3) >= 2) return null;
  return { type: 'wheel', delta: b & 1 ? 1 : -1, col: x - 1, row: y - 1, shift: !!(b & 4), alt: !!(b & 8), ctrl: !!(b & 16) };
}

const LINUX_F: Record<string, string> = { A: 'f1', B: 'f2', C: 'f3', D: 'f4', E: 'f5' };

/** A CSI key whose final byte is neither `~` nor `u`. */
function otherCsiKey(final: string, body: string, params: string[], extra: number, whole: string): InputEvent {
  if (final === 'Z') return key('tab', whole, 1 | modParam(params[1]) | extra);
  if ((final === 'I' || final === 'O') && body === '') return { type: 'focus', focused: final === 'I' };
  if (LETTER[final] && final !== 'M') return key(LETTER[final]!, whole, modParam(params[1]) | extra);
  if (final >= 'a' && final <= 'd' && body === '') return key(LETTER[final.toUpperCase()]!, whole, 1 | extra);
  if (final === '^' && TILDE[params[0]!]) return key(TILDE[params[0]!]!, whole, 4 | extra);
  return key('unknown', whole, extra);
}

export class KeyParser {
  private buf = '';
  /** Text gathered for one event. */
  private text = '';
  private decoder = new TextDecoder('utf-8');
  private pasting: string[] | null = null;
  private pasteTail = '';
  private timer: unknown = null;
  private expectCpr = 0;
  private readonly escMs: number;
  private readonly pasteMs: number;
  private readonly timers: Timers;

  constructor(
    private readonly emit: (ev: InputEvent) => void,
    opts: KeyParserOptions = {},
  ) {
    this.escMs = opts.escapeTimeoutMs ?? 25;
    this.pasteMs = opts.pasteTimeoutMs ?? 500;
    this.timers = opts.timers ?? { setTimeout: (f, ms) => setTimeout(f, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) };
  }

  /** The next `CSI row;col R` is a cursor position report (it doubles as Shift+F3 otherwise). */
  expectCursorReport(): void {
    this.expectCpr++;
  }

  /** Stop waiting for a cursor report that did not come. */
  cancelCursorReport(): void {
    if (this.expectCpr > 0) this.expectCpr--;
  }

  feed(data: Uint8Array | string): void {
    const s = typeof data === 'string' ? data : this.decoder.decode(data, { stream: true });
    if (!s) return;
    this.clearTimer();
    if (this.pasting) this.feedPaste(s);
    else {
      this.buf += s;
      this.parse();
    }
  }

  /** Deliver whatever waits (a lone Esc, an unfinished paste) as if its wait had run out. */
  flush(): void {
    this.clearTimer();
    if (this.pasting) {
      this.endPaste(this.pasting.join('') + this.pasteTail);
      return;
    }
    if (!this.buf) return;
    const b = this.buf;
    this.buf = '';
    if (b === '\x1b') this.emit(key('escape', b));
    else if (b.length === 2) this.emitAlt(b);
    // A longer unfinished sequence is noise from the terminal, not keys: drop it.
  }

  private clearTimer(): void {
    if (this.timer !== null) {
      this.timers.clearTimeout(this.timer);
      this.timer = null;
    }
  }

  private arm(ms: number): void {
    this.clearTimer();
    this.timer = this.timers.setTimeout(() => {
      this.timer = null;
      this.flush();
    }, ms);
  }

  private feedPaste(s: string): void {
    const chunk = this.pasteTail + s;
    const end = chunk.indexOf(PASTE_END);
    if (end >= 0) {
      this.pasting!.push(chunk.slice(0, end));
      const rest = chunk.slice(end + PASTE_END.length);
      this.endPaste(this.pasting!.join(''));
      if (rest) {
        this.buf += rest;
        this.parse();
      }
      return;
    }
    // Keep a possible start of the end marker for the next read.
    let keep = 0;
    for (let k = Math.min(PASTE_END.length - 1, chunk.length); k > 0; k--) {
      if (PASTE_END.startsWith(chunk.slice(chunk.length - k))) {
        keep = k;
        break;
      }
    }
    this.pasting!.push(chunk.slice(0, chunk.length - keep));
    this.pasteTail = chunk.slice(chunk.length - keep);
    this.arm(this.pasteMs);
  }

  private endPaste(text: string): void {
    this.pasting = null;
    this.pasteTail = '';
    this.emit({ type: 'paste', text: text.replace(/\r\n?/g, '\n') });
  }

  private parse(): void {
    const b = this.buf;
    let i = 0;
    while (i < b.length) {
      const c = b.charCodeAt(i);
      if (c === 0x1b) {
        this.flushText();
        i = this.escapeAt(b, i);
        if (i < 0) return;
      } else if (c < 0x20 || c === 0x7f) {
        this.flushText();
        this.emit(controlKey(c, b[i]!));
        i++;
      } else if (c >= 0x80 && c < 0xa0) i++;
      else i = this.textRun(b, i);
    }
    this.flushText();
    this.buf = '';
  }

  private flushText(): void {
    if (!this.text) return;
    const text = this.text;
    this.text = '';
    this.emit({ type: 'text', text });
  }

  /** A run of text from b[i], as one event; returns the index after it. */
  private textRun(b: string, i: number): number {
    let j = i + 1;
    while (j < b.length) {
      const d = b.charCodeAt(j);
      if (d < 0x20 || d === 0x7f || (d >= 0x80 && d < 0xa0)) break;
      j++;
    }
    this.text += b.slice(i, j);
    return j;
  }

  /**
   * The sequence at b[i] (ESC): a paste begins, a sequence is decoded, or an unfinished one waits
   * for more. Returns the index after it; -1 when the rest of `b` is taken.
   */
  private escapeAt(b: string, i: number): number {
    if (b.startsWith(PASTE_START, i)) {
      this.pasting = [];
      this.pasteTail = '';
      this.buf = '';
      this.feedPaste(b.slice(i + PASTE_START.length));
      return -1;
    }
    const end = sequenceEnd(b, i);
    if (end < 0) {
      this.buf = b.slice(i);
      // A prefix of the paste marker waits like any unfinished sequence.
      this.arm(this.escMs);
      return -1;
    }
    this.decode(b.slice(i, end));
    return end;
  }

  private emitAlt(seq: string): void {
    const ch = seq.slice(1);
    const c = ch.codePointAt(0)!;
    if (c < 0x20 || c === 0x7f) {
      this.emit(controlKey(c, seq, 2));
      return;
    }
    this.emit(key(ch === ' ' ? 'space' : ch, seq, 2));
  }

  private decode(seq: string): void {
    const c = seq[1]!;
    if (c === '[') return this.decodeCsi(seq, 0);
    if (c === 'O') return this.decodeSs3(seq, 0);
    if (c === ']' || c === 'P' || c === '_' || c === '^' || c === 'X') return; // terminal replies: not keys
    if (c === '\x1b') {
      if (seq.length === 2) {
        this.emit(key('escape', seq, 2));
        return;
      }
      const inner = seq.slice(1);
      if (inner[1] === '[') return this.decodeCsi(inner, 2, seq);
      if (inner[1] === 'O') return this.decodeSs3(inner, 2, seq);
      this.emitAlt(inner);
      return;
    }
    this.emitAlt(seq);
  }

  private decodeSs3(seq: string, extra: number, whole = seq): void {
    const f = seq[seq.length - 1]!;
    const digits = seq.slice(2, -1);
    const mods = (digits ? Math.max(0, Number(digits) - 1) : 0) | extra;
    if (LETTER[f]) {
      this.emit(key(LETTER[f]!, whole, mods));
      return;
    }
    if (f >= 'a' && f <= 'd') {
      this.emit(key(LETTER[f.toUpperCase()]!, whole, mods | 4));
      return;
    }
    if (SS3_TEXT[f]) {
      this.emit({ type: 'text', text: SS3_TEXT[f]! });
      return;
    }
    this.emit(key('unknown', whole, mods));
  }

  private decodeCsi(seq: string, extra: number, whole = seq): void {
    if (seq[2] === 'M' && seq.length === 6) {
      // X10 mouse: wheel only.
      const ev = wheel(seq.charCodeAt(3) - 32, seq.charCodeAt(4) - 32, seq.charCodeAt(5) - 32);
      if (ev) this.emit(ev);
      return;
    }
    if (seq[2] === '[') {
      this.emit(key(LINUX_F[seq[3]!] ?? 'unknown', whole, extra));
      return;
    }
    const final = seq[seq.length - 1]!;
    const body = seq.slice(2, -1);
    const lead = body[0];
    if (lead === '<') return this.sgrMouse(body, final);
    if (lead === '?' || lead === '>' || lead === '=' || /[ -/]/.test(body)) return; // replies to queries
    const params = body.split(';');
    if (final === 'R' && this.expectCpr > 0 && params.length === 2) {
      this.expectCpr--;
      this.emit({ type: 'cursor', row: Number(params[0]), col: Number(params[1]) });
      return;
    }
    if (final === '~') return this.tildeKey(params, extra, whole);
    if (final === 'u') return this.csiUKey(params, extra, whole);
    this.emit(otherCsiKey(final, body, params, extra, whole));
  }

  /** SGR mouse: CSI < b ; x ; y M (press) or m (release, not wanted). */
  private sgrMouse(body: string, final: string): void {
    if (final !== 'M') return;
    const [b, x, y] = body.slice(1).split(';').map(Number) as [number, number, number];
    const ev = b & 32 ? null : wheel(b, x, y);
    if (ev) this.emit(ev);
  }

  private tildeKey(params: string[], extra: number, whole: string): void {
    const code = params[0]!;
    // modifyOtherKeys: CSI 27 ; mods ; code ~
    if (code === '27' && params.length >= 3) return this.emitCode(Number(params[2]), modParam(params[1]) | extra, whole);
    this.emit(key(TILDE[code] ?? 'unknown', whole, modParam(params[1]) | extra));
  }

  /** CSI-u (kitty / fixterms): CSI code[:alternates] ; mods[:event] [; text] u */
  private csiUKey(params: string[], extra: number, whole: string): void {
    const [mp, ev] = (params[1] ?? '').split(':');
    if (ev === '3') return; // key release
    this.emitCode(Number(params[0]!.split(':')[0]), modParam(mp) | extra, whole);
  }

  /** A key given by its code point and modifiers (CSI-u, modifyOtherKeys). */
  private emitCode(code: number, mods: number, seq: string): void {
    if (!Number.isInteger(code) || code < 0 || code > 0x10ffff) this.emit(key('unknown', seq, mods));
    // Kitty's functional keys (keypad, media, modifiers alone) live in the private use area.
    else if (code >= 0xe000 && code <= 0xf8ff) this.kittyKey(code, mods, seq);
    else if (code === 13 || code === 9 || code === 27 || code === 127 || code === 8 || code === 32 || code < 0x20)
      this.emit(controlKey(code, seq, mods));
    else {
      const ch = String.fromCodePoint(code);
      // Plain or shifted printable characters are text (CSI-u sends them when it disambiguates).
      this.emit((mods & ~1) === 0 ? { type: 'text', text: mods & 1 ? ch.toUpperCase() : ch } : key(ch.toLowerCase(), seq, mods));
    }
  }

  private kittyKey(code: number, mods: number, seq: string): void {
    const kp = KITTY_KEYS[code];
    if (kp === undefined) {
      // Modifier keys pressed alone (57441–57454) are not keys.
      if (code < 57441 || code > 57454) this.emit(key('unknown', seq, mods));
      return;
    }
    this.emit(kp.length === 1 && (mods & ~1) === 0 ? { type: 'text', text: kp } : key(kp, seq, mods));
  }
}
