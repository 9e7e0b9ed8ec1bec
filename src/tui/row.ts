// One screen row as cells, and the bytes that turn one row into another. The renderer writes only
// these bytes, never a component's string as given, so a row can be updated from its first changed
// cell and nothing but text, SGR styles and OSC 8 links ever reaches the terminal.

import { CURSOR_MARKER, hyperlinkUrl, scanEscape } from './escapes.js';
import { wireTransition } from './spans.js';
import { applySgr, DEFAULT_STYLE, type Style, withLink, withoutColor } from './style.js';
import { TAB_WIDTH } from './wrap.js';
import { graphemeWidth, isPrintableAscii, segmentGraphemes } from './width.js';

export interface Row {
  /** A grapheme per cell; '' for the second cell of a wide character. Trailing plain spaces are left out. */
  readonly cells: string[];
  readonly styles: Style[];
  /** Column of the cursor marker, -1 when the row has none. */
  readonly cursor: number;
  /** Columns up to the last cell that is not a default-styled space. */
  readonly inkWidth: number;
}

export const EMPTY_ROW: Row = Object.freeze({ cells: [], styles: [], cursor: -1, inkWidth: 0 }) as Row;

/** Cells of a rendered line, cut at `width` columns. */
export function parseRow(line: string, width: number): Row {
  if (line === '') return EMPTY_ROW;
  const b = new RowBuilder(width);
  let i = 0;
  while (i < line.length) {
    const e = line.indexOf('\x1b', i);
    if (e < 0) {
      b.text(line.slice(i));
      break;
    }
    if (e > i) b.text(line.slice(i, e));
    i = b.escape(line, e);
  }
  return b.finish();
}

/** A row being built, cell by cell, up to its width. */
class RowBuilder {
  private readonly cells: string[] = [];
  private readonly styles: Style[] = [];
  private cursor = -1;
  private style = DEFAULT_STYLE;

  constructor(private readonly width: number) {}

  private get full(): boolean {
    return this.cells.length >= this.width;
  }

  private cell(c: string): void {
    this.cells.push(c);
    this.styles.push(this.style);
  }

  /** Text without escape sequences. */
  text(t: string): void {
    if (this.full) return;
    if (isPrintableAscii(t)) {
      const n = Math.min(t.length, this.width - this.cells.length);
      for (let k = 0; k < n; k++) this.cell(t[k]!);
      return;
    }
    for (const { segment: g } of segmentGraphemes(t)) if (!this.grapheme(g)) return;
  }

  /** One cluster; false once the row is full. */
  private grapheme(g: string): boolean {
    if (g === '\t') {
      const n = TAB_WIDTH - (this.cells.length % TAB_WIDTH);
      for (let k = 0; k < n && !this.full; k++) this.cell(' ');
      return true;
    }
    const c = g.charCodeAt(0);
    if (c < 0x20 || (c >= 0x7f && c < 0xa0)) return true;
    const w = graphemeWidth(g);
    // A zero-width cluster on its own (a stray combining mark, say) joins nothing: dropped.
    if (w === 0) return true;
    if (this.cells.length + w > this.width) {
      // A wide character that does not fit: a blank in its place.
      if (!this.full) this.cell(' ');
      return false;
    }
    this.cell(g);
    for (let k = 1; k < w; k++) this.cell('');
    return !this.full;
  }

  /** The escape sequence at line[e]: a style, a link, the cursor marker, or nothing. Returns the index after it. */
  escape(line: string, e: number): number {
    const sc = scanEscape(line, e);
    if (sc.kind === 'sgr') this.style = applySgr(this.style, line.slice(e + 2, sc.end - 1));
    else if (sc.kind === 'osc') {
      const url = hyperlinkUrl(line, e, sc.end);
      if (url !== null) this.style = withLink(this.style, url);
    } else if (sc.kind === 'cursor' && this.cursor < 0) this.cursor = Math.min(this.cells.length, this.width - 1);
    return sc.end;
  }

  finish(): Row {
    const { cells, styles } = this;
    let ink = cells.length;
    while (ink > 0 && cells[ink - 1] === ' ' && styles[ink - 1] === DEFAULT_STYLE) ink--;
    // Trailing plain spaces look like nothing but are cells a terminal keeps: written, they make
    // the row longer when the terminal rewraps it at a resize than the renderer reckons.
    cells.length = ink;
    styles.length = ink;
    return { cells, styles, cursor: this.cursor, inkWidth: ink };
  }
}

/** The row without colours (see withoutColor). */
export function rowWithoutColor(r: Row): Row {
  if (!r.styles.some((st) => st.fg || st.bg)) return r;
  const styles = r.styles.map(withoutColor);
  const cells = r.cells.slice();
  let ink = cells.length;
  while (ink > 0 && cells[ink - 1] === ' ' && styles[ink - 1] === DEFAULT_STYLE) ink--;
  cells.length = ink;
  styles.length = ink;
  return { cells, styles, cursor: r.cursor, inkWidth: ink };
}

/** Whether a line carries the cursor marker (cheaper than parsing it). */
export const hasCursorMarker = (line: string): boolean => line.includes(CURSOR_MARKER);

const cellAt = (r: Row, i: number) => (i < r.cells.length ? r.cells[i]! : ' ');
const styleAt = (r: Row, i: number) => (i < r.styles.length ? r.styles[i]! : DEFAULT_STYLE);
const same = (a: Row, b: Row, i: number) => cellAt(a, i) === cellAt(b, i) && styleAt(a, i) === styleAt(b, i);

export interface RowChange {
  /** First column to write. */
  from: number;
  /** Column after the last cell to write (from the new row). */
  to: number;
  /** Erase from `to` to the end of the line afterwards. */
  eraseAfter: boolean;
}

/** The cells that differ between two rows, or null when they look the same. */
export function diffRows(old: Row, neu: Row): RowChange | null {
  const n = Math.max(old.cells.length, neu.cells.length);
  let from = 0;
  while (from < n && same(old, neu, from)) from++;
  if (from === n) return null;
  let last = n - 1;
  while (last > from && same(old, neu, last)) last--;
  // Never start or end inside a wide character, on either side.
  while (from > 0 && (cellAt(neu, from) === '' || cellAt(old, from) === '')) from--;
  while (last + 1 < n && (cellAt(neu, last + 1) === '' || cellAt(old, last + 1) === '')) last++;
  // Past the new row's end everything is blank: erase rather than write spaces.
  const newLen = neu.cells.length;
  if (last >= newLen) return { from: Math.min(from, newLen), to: newLen, eraseAfter: true };
  return { from, to: last + 1, eraseAfter: false };
}

/**
 * Emoji sequences terminals disagree on the width of: a variation selector 16 (⚠️ is one column
 * in tmux and xterm, two in kitty), a zero-width joiner (👨‍👩‍👧 is eight columns where the
 * terminal does not join), a keycap, a skin tone, a flag.
 */
const UNSURE_WIDTH = /[\u200d\ufe0f\u20e3\u{1f3fb}-\u{1f3ff}\u{1f1e6}-\u{1f1ff}]/u;

/** Writes cells [from, to) of `row`, starting in terminal style `cur`; returns the bytes and the style left in force. */
export function writeCells(row: Row, from: number, to: number, cur: Style): { out: string; style: Style } {
  let out = '';
  for (let i = from; i < to; i++) {
    const c = row.cells[i]!;
    if (c === '') continue;
    const s = row.styles[i]!;
    if (s !== cur) {
      out += wireTransition(cur, s);
      cur = s;
    }
    out += c;
    if (c.length > 1 && UNSURE_WIDTH.test(c)) {
      // Put the cursor where the next cell is by the renderer's count, whatever the terminal
      // made of the sequence: what follows on the row lands where it is meant to, and a row
      // streamed in pieces looks as one drawn whole.
      let next = i + 1;
      while (next < row.cells.length && row.cells[next] === '') next++;
      out += `\x1b[${next + 1}G`;
    }
  }
  return { out, style: cur };
}
