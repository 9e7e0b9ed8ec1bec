// The terminal's cursor as a painter knows it: its row and column (-1 when not known), the style
// in force, whether it is shown. Every byte a painter writes goes through it — moves, styles,
// cells, erasing, showing and hiding — so what it knows stays what the terminal has.

import { type MoveOptions, cursorMove } from './cursor-move.js';
import { CURSOR_HIDE, CURSOR_SHOW, ERASE_LINE_RIGHT } from './escapes.js';
import { diffRows, type Row, writeCells } from './row.js';
import { wireTransition } from './spans.js';
import { DEFAULT_STYLE, INVERSE, OVERLINE, STRIKE, type Style, UNDERLINE } from './style.js';

/** Attributes that show on a blank cell. */
const SHOWS_ON_BLANKS = INVERSE | UNDERLINE | STRIKE | OVERLINE;

/** How a painter may move: everything but the terminal's line feed, which the tracker knows. */
export type MoveRules = Omit<MoveOptions, 'lineFeedReturns'>;

export class CursorTracker {
  /** Full screen: a screen row; inline: a frame row (negative above the region). -1 when not known (full screen). */
  row = -1;
  /** -1 when not known (after a write to the last column the terminal's column is pending a wrap). */
  col = -1;
  style: Style = DEFAULT_STYLE;
  /** null when not known. */
  shown: boolean | null = null;

  /** `lineFeedReturns`: a line feed also returns to column 0 (see Terminal). */
  constructor(private readonly lineFeedReturns: () => boolean) {}

  /** The bytes that move the cursor to (row, col); the cursor is left where it is. */
  movement(row: number, col: number, rules: MoveRules): string {
    if (this.row === row && this.col === col) return '';
    return cursorMove(this.row, this.col, row, col, { ...rules, lineFeedReturns: this.lineFeedReturns() });
  }

  moveTo(row: number, col: number, rules: MoveRules): string {
    const out = this.movement(row, col, rules);
    this.at(row, col);
    return out;
  }

  /** The cursor is at (row, col): put there by bytes written elsewhere. */
  at(row: number, col: number): void {
    this.row = row;
    this.col = col;
  }

  /** Switch the terminal to the default style (needed before erasing, inserting or deleting lines). */
  plain(): string {
    if (this.style === DEFAULT_STYLE) return '';
    const t = wireTransition(this.style, DEFAULT_STYLE);
    this.style = DEFAULT_STYLE;
    return t;
  }

  /**
   * Before a line feed that scrolls: the row it brings in is filled with the current background
   * (and, in some terminals, what else shows on a blank cell), so only a style that shows on
   * blanks is ended; a colour or weight of the text goes on into the next row.
   */
  blankSafe(): string {
    const st = this.style;
    return st.bg || st.link || st.flags & SHOWS_ON_BLANKS ? this.plain() : '';
  }

  /** Cells [from, to) of `row`, the cursor being on the row at column `from`. */
  cells(row: Row, from: number, to: number, width: number): string {
    const w = writeCells(row, from, to, this.style);
    this.style = w.style;
    this.col = to >= width ? -1 : to;
    return w.out;
  }

  /** The cells of `row` that differ from `prev` (what is on the terminal); `move(col)` brings the cursor to the row. */
  change(prev: Row, row: Row, width: number, move: (col: number) => string): string {
    const ch = diffRows(prev, row);
    if (!ch) return '';
    const out = move(ch.from) + this.cells(row, ch.from, ch.to, width);
    return ch.eraseAfter ? out + this.plain() + ERASE_LINE_RIGHT : out;
  }

  /** Show the cursor (where it is now). */
  show(): string {
    if (this.shown === true) return '';
    this.shown = true;
    return CURSOR_SHOW;
  }

  hide(): string {
    if (this.shown === false) return '';
    this.shown = false;
    return CURSOR_HIDE;
  }

  /** The terminal's state is not known (it was redrawn, taken back, or resized). */
  forget(row = -1, col = -1): void {
    this.at(row, col);
    this.shown = null;
  }
}

/** The last of `rows` (from `from` on, where `drawable(i)`) with the cursor marker, -1 when none. */
export function cursorRow(rows: readonly Row[], from = 0, drawable: (i: number) => boolean = () => true): number {
  for (let r = rows.length - 1; r >= from; r--) if (rows[r]!.cursor >= 0 && drawable(r)) return r;
  return -1;
}
