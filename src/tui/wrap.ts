// Wrapping, truncating and slicing styled text by display columns. Each output line is
// self-contained: it opens the styles in force where it starts and closes them where it ends, so a
// line can be drawn alone (the renderer redraws single lines) and styles survive a wrap.

import { parseAnsi, type Span, spansToString, transition } from './spans.js';
import { DEFAULT_STYLE, type Style } from './style.js';
import { graphemes, graphemeWidth, isPrintableAscii, textWidth, visibleWidth } from './width.js';

export const TAB_WIDTH = 4;

export interface WrapOptions {
  /** Break anywhere and keep every space (code, preformatted output); default: break between words. */
  hard?: boolean;
  /** Put before the first line (counted in the width). */
  prefix?: string | readonly Span[];
  /** Put before every other line; defaults to `prefix`. */
  restPrefix?: string | readonly Span[];
}

interface Piece {
  text: string;
  style: Style;
  width: number;
}

const toSpans = (p: string | readonly Span[] | undefined): readonly Span[] =>
  p === undefined ? [] : typeof p === 'string' ? parseAnsi(p) : p;

/** Lines of at most `width` columns holding styled text (newlines in the text start new lines). */
export function wrapSpans(spans: readonly Span[], width: number, opts: WrapOptions = {}): string[] {
  const w = new Wrapper(width, opts);
  splitLines(spans).forEach((line, li) => {
    if (li > 0) w.newLine();
    if (opts.hard) w.hardLine(line);
    else w.softLine(line);
  });
  return w.finish();
}

/**
 * Logical lines wrapped before, by width and content: an open paragraph is drawn again at every
 * frame while it streams, and one of thousands of lines (a program's output pasted as plain text)
 * would otherwise be wrapped whole each time. Emptied when full.
 */
const keptLines = new Map<string, string[]>();
const LINES_KEPT = 10_000;
/** Below this many lines a paragraph is wrapped as it is. */
const MANY_LINES = 64;

/**
 * `wrapSpans(spans, width)` (no options), its lines of many kept: each logical line wraps on its
 * own when nothing is put before the rows.
 */
export function wrapSpansKept(spans: readonly Span[], width: number): string[] {
  let breaks = 0;
  for (const sp of spans) for (let i = sp.text.indexOf('\n'); i >= 0 && breaks < MANY_LINES; i = sp.text.indexOf('\n', i + 1)) breaks++;
  if (breaks < MANY_LINES) return wrapSpans(spans, width);
  const out: string[] = [];
  for (const line of splitLines(spans)) {
    let key = `${width}`;
    for (const sp of line) key += `\n${sp.style.key}\n${sp.text}`;
    let rows = keptLines.get(key);
    if (!rows) {
      rows = wrapSpans(line, width);
      if (keptLines.size >= LINES_KEPT) keptLines.clear();
      keptLines.set(key, rows);
    }
    for (const r of rows) out.push(r);
  }
  return out;
}

/** The spans of each logical line (split at newlines). */
function splitLines(spans: readonly Span[]): Span[][] {
  const lines: Span[][] = [[]];
  for (const sp of spans) {
    const parts = sp.text.split('\n');
    parts.forEach((p, k) => {
      if (k > 0) lines.push([]);
      if (p) lines[lines.length - 1]!.push({ text: p, style: sp.style });
    });
  }
  return lines;
}

/** Spaces and tabs at the end of a row, taken off. */
function trimRowEnd(row: Piece[]): void {
  while (row.length) {
    const last = row[row.length - 1]!;
    const t = last.text.replace(/[ \t]+$/, '');
    if (t === last.text) return;
    if (t) {
      last.width -= last.text.length - t.length;
      last.text = t;
      return;
    }
    row.pop();
  }
}

/** Rows being filled, one logical line after another. */
class Wrapper {
  private readonly out: string[] = [];
  private readonly first: readonly Span[];
  private readonly rest: readonly Span[];
  private readonly restW: number;
  private row: Piece[] = [];
  private rowW = 0;
  private avail: number;
  /** The current row continues a line broken by wrapping. */
  private wrapped = false;
  /** A run of non-space that may cross spans (soft wrapping). */
  private word: Piece[] = [];
  private wordW = 0;

  constructor(
    private readonly width: number,
    private readonly opts: WrapOptions,
  ) {
    this.first = toSpans(opts.prefix);
    this.rest = opts.restPrefix === undefined ? this.first : toSpans(opts.restPrefix);
    this.restW = this.rest.reduce((a, s) => a + textWidth(s.text), 0);
    this.avail = Math.max(1, width - this.first.reduce((a, s) => a + textWidth(s.text), 0));
  }

  newLine(): void {
    this.endRow();
    this.wrapped = false;
  }

  finish(): string[] {
    this.endRow();
    return this.out;
  }

  private endRow(): void {
    if (!this.opts.hard) trimRowEnd(this.row);
    this.out.push(serialize(this.out.length === 0 ? this.first : this.rest, this.row));
    this.row = [];
    this.rowW = 0;
    this.avail = Math.max(1, this.width - this.restW);
  }

  private breakRow(): void {
    this.endRow();
    this.wrapped = true;
  }

  private push(text: string, st: Style, w: number): void {
    const last = this.row[this.row.length - 1];
    if (last && last.style === st) {
      last.text += text;
      last.width += w;
    } else this.row.push({ text, style: st, width: w });
    this.rowW += w;
  }

  /** Graphemes of `text` one by one, breaking rows as they fill. */
  private pushBroken(text: string, st: Style): void {
    for (const g of graphemes(text)) {
      let w = g === '\t' ? TAB_WIDTH - (this.rowW % TAB_WIDTH) : graphemeWidth(g);
      if (this.rowW + w > this.avail && this.rowW > 0) {
        this.breakRow();
        if (g === '\t') w = TAB_WIDTH;
      }
      this.push(g === '\t' ? ' '.repeat(w) : g, st, w);
    }
  }

  /** Anywhere, every space kept. */
  hardLine(line: readonly Span[]): void {
    for (const sp of line) {
      if (isPrintableAscii(sp.text)) this.pushAscii(sp.text, sp.style);
      else this.pushBroken(sp.text, sp.style);
    }
  }

  private pushAscii(text: string, st: Style): void {
    let t = text;
    while (t) {
      const room = this.avail - this.rowW;
      if (room <= 0) {
        this.breakRow();
        continue;
      }
      this.push(t.slice(0, room), st, Math.min(room, t.length));
      t = t.slice(room);
    }
  }

  /** Between words; spaces at a break are dropped. */
  softLine(line: readonly Span[]): void {
    for (const sp of line)
      for (const m of sp.text.matchAll(/[ \t]+|[^ \t]+/g)) {
        const t = m[0];
        if (t.charCodeAt(0) === 0x20 || t.charCodeAt(0) === 0x09) this.spaces(t, sp.style);
        else this.addToWord(t, sp.style);
      }
    this.flushWord();
  }

  private spaces(t: string, st: Style): void {
    this.flushWord();
    if (this.rowW === 0 && this.wrapped) return;
    let w = 0;
    for (const ch of t) w += ch === '\t' ? TAB_WIDTH - ((this.rowW + w) % TAB_WIDTH) : 1;
    if (this.rowW + w > this.avail) this.breakRow();
    else this.push(' '.repeat(w), st, w);
  }

  private addToWord(t: string, st: Style): void {
    const w = textWidth(t);
    const last = this.word[this.word.length - 1];
    if (last && last.style === st) {
      last.text += t;
      last.width += w;
    } else this.word.push({ text: t, style: st, width: w });
    this.wordW += w;
  }

  private flushWord(): void {
    if (!this.word.length) return;
    if (this.rowW + this.wordW > this.avail && this.rowW > 0) this.breakRow();
    if (this.wordW > this.avail) for (const p of this.word) this.pushBroken(p.text, p.style);
    else for (const p of this.word) this.push(p.text, p.style, p.width);
    this.word = [];
    this.wordW = 0;
  }
}

function serialize(prefix: readonly Span[], row: Piece[]): string {
  let out = '';
  let cur = DEFAULT_STYLE;
  for (const p of prefix) {
    if (p.text) {
      out += transition(cur, p.style) + p.text;
      cur = p.style;
    }
  }
  for (const p of row) {
    out += transition(cur, p.style) + p.text;
    cur = p.style;
  }
  return out + transition(cur, DEFAULT_STYLE);
}

/** `wrapSpans` for a string with SGR / OSC 8 styles. */
export function wrapText(text: string, width: number, opts: WrapOptions = {}): string[] {
  return wrapSpans(parseAnsi(text), width, opts);
}

/** Styled text cut to `width` columns, ending in `ellipsis` when something was cut. */
export function truncate(text: string, width: number, ellipsis = '…'): string {
  if (visibleWidth(text) <= width) return text;
  const ew = textWidth(ellipsis);
  const out = leadingColumns(parseAnsi(text), Math.max(0, width - ew));
  if (ew <= width) out.push({ text: ellipsis, style: DEFAULT_STYLE });
  return spansToString(out);
}

/** The spans' first `keep` columns, a tab as one space. */
function leadingColumns(spans: readonly Span[], keep: number): Span[] {
  const out: Span[] = [];
  let w = 0;
  for (const sp of spans) {
    const part = leadingOf(sp.text, w, keep);
    if (part.text) out.push({ text: part.text, style: sp.style });
    if (part.cut) break;
    w = part.w;
  }
  return out;
}

/** As much of `text`, starting at column `w`, as ends by column `keep`; `cut` when not all of it. */
function leadingOf(text: string, w: number, keep: number): { text: string; w: number; cut: boolean } {
  let t = '';
  for (const g of graphemes(text)) {
    const gw = g === '\t' ? 1 : graphemeWidth(g);
    if (w + gw > keep) return { text: t, w, cut: true };
    t += g === '\t' ? ' ' : g;
    w += gw;
  }
  return { text: t, w, cut: false };
}

/** Columns [from, to) of styled text; a wide character cut in half becomes a space. */
export function sliceColumns(text: string, from: number, to = Infinity): string {
  const out: Span[] = [];
  let col = 0;
  for (const sp of parseAnsi(text)) {
    const cut = sliceSpan(sp.text, col, from, to);
    col = cut.col;
    if (cut.text) out.push({ text: cut.text, style: sp.style });
    if (col >= to) break;
  }
  return spansToString(out);
}

/** Columns [from, to) of `text`, which starts at column `col`; and the column where it stopped. */
function sliceSpan(text: string, col: number, from: number, to: number): { text: string; col: number } {
  let t = '';
  for (const g of graphemes(text)) {
    const gw = graphemeWidth(g);
    t += partIn(g, col, col + gw, from, to);
    col += gw;
    if (col >= to) break;
  }
  return { text: t, col };
}

/** What cluster `g` on columns [col, end) shows of columns [from, to): itself, a space (a wide one cut in half), or nothing. */
function partIn(g: string, col: number, end: number, from: number, to: number): string {
  if (col >= from && end <= to) return g;
  return end - col === 2 && ((col < from && end > from) || (col < to && end > to)) ? ' ' : '';
}

/** Styled text padded with spaces to `width` columns (longer text is left as it is). */
export function padEnd(text: string, width: number): string {
  const w = visibleWidth(text);
  return w >= width ? text : text + ' '.repeat(width - w);
}
