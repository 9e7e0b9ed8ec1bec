// The bookkeeping of the inline screen's region, without a terminal: where its rows are on the
// screen, which of them went into the scrollback for good (frozen: the terminal owns them), which
// transcript lines those rows show (hidden: the frame does not draw them again), and how both are
// found again after a resize, when the transcript is drawn at another width.
//
// Frame rows are numbered from the region's first row; `top` is the screen row of frame row 0,
// negative once the region's head has scrolled into the scrollback. The frame is the frozen rows
// (kept only as placeholders), then the transcript's live lines from `hiddenDoc` on, then the
// footer: frame row = doc line + frozen - hiddenDoc.

import { EMPTY_ROW, parseRow, type Row } from './row.js';
import { wireTransition } from './spans.js';
import { DEFAULT_STYLE } from './style.js';

/**
 * "Ink": the characters that are the same whatever the width a block is drawn at, which is how
 * the lines the rows in the scrollback already show are found again after a resize. Not spaces,
 * and not what a block draws to fit its width: rules, box drawing and table borders (also as
 * ASCII `+-|`), bullets, ellipses, punctuation.
 */
const INK = /[^\s!-/:-@[-`{-~\u2022\u2026\u2500-\u259f]/gu;
const INK_ONE = new RegExp(INK.source, 'u');

const inkOfCell = (c: string): number => (c === '' || c === ' ' ? 0 : (c.match(INK)?.length ?? 0));

/** Ink characters on a row. */
export function countInk(row: Row): number {
  let n = 0;
  for (const c of row.cells) n += inkOfCell(c);
  return n;
}

/** What the row shows after its last ink character (a comma, a full stop), null when it has no ink. */
export function tailAfterInk(row: Row): string | null {
  let i = row.cells.length - 1;
  while (i >= 0 && !INK_ONE.test(row.cells[i]!)) i--;
  if (i < 0) return null;
  return row.cells
    .slice(i + 1)
    .join('')
    .replace(/\s+/g, '');
}

const isBlank = (row: Row, i: number) => row.cells[i] === '' || (row.cells[i] === ' ' && row.styles[i] === DEFAULT_STYLE);

/** Index of the first cell after the first `n` ink characters of the row. */
function afterInk(row: Row, n: number): number {
  let i = 0;
  for (let ink = 0; i < row.cells.length && ink < n; i++) ink += inkOfCell(row.cells[i]!);
  return i;
}

/** Index of the first cell from `i` on that is neither blank nor the next character of `tail`. */
function afterTail(row: Row, i: number, tail: string): number {
  let t = 0;
  for (; i < row.cells.length; i++) {
    if (isBlank(row, i)) continue;
    if (t >= tail.length || !tail.startsWith(row.cells[i]!, t)) break;
    t += row.cells[i]!.length;
  }
  return i;
}

/**
 * The line without the cells holding its first `n` ink characters, then the `tail` that followed
 * them in the scrollback (punctuation), and the blanks after them: what is left of a line whose
 * head is already in the scrollback.
 */
export function dropInk(line: string, width: number, n: number, tail: string): string {
  const row = parseRow(line, width);
  let out = '',
    st = DEFAULT_STYLE;
  for (let i = afterTail(row, afterInk(row, n), tail); i < row.cells.length; i++) {
    const c = row.cells[i]!;
    if (c === '') continue;
    out += wireTransition(st, row.styles[i]!) + c;
    st = row.styles[i]!;
  }
  return out + wireTransition(st, DEFAULT_STYLE);
}

/** Where the region is after the terminal changed size, reckoned from the rows it had. */
export interface ResizedLayout {
  /** Frame rows now off the top of the screen (frozen from now on). */
  frozen: number;
  /** Screen row of the first row that is still live. */
  liveTop: number;
}

export class InlineRegion {
  /** Screen row of frame row 0. */
  top = 0;
  /** Screen rows. */
  height = 1;
  /** Frame rows [0, frozen) went into the scrollback: the terminal owns them. */
  frozen = 0;
  /** Ink on the frozen rows (their cells are let go; a resize needs the count). */
  frozenInk = 0;
  /** Frozen rows without ink after the last one with ink (a blank line is one row at any width). */
  frozenBlank = 0;
  /** What the last frozen row with ink shows after its last ink character (see dropInk). */
  frozenTail = '';
  /** Transcript lines [0, hiddenDoc) are shown by frozen rows, not by the frame. */
  hiddenDoc = 0;
  /**
   * Ink at the start of line `hiddenDoc` that frozen rows already show (a wrapped line straddling
   * the top of the screen at a resize): the frame shows only the rest. frozenInk counts it too.
   */
  hiddenInk = 0;
  /** After a resize: the ink of the frozen rows, by which hiddenDoc is found again; -1 when not. */
  pendingSkipInk = -1;

  /** A fresh region whose first row is screen row `top`. */
  reset(top: number): void {
    this.top = top;
    this.frozen = 0;
    this.frozenInk = 0;
    this.frozenBlank = 0;
    this.frozenTail = '';
    this.hiddenDoc = 0;
    this.hiddenInk = 0;
    this.pendingSkipInk = -1;
  }

  /** Frame row `i` is on the screen and not frozen (it can be drawn). */
  onScreen(i: number): boolean {
    return i >= this.frozen && this.top + i >= 0 && this.top + i < this.height;
  }

  /** Frame row of transcript line `doc`. */
  frameRow(doc: number): number {
    return doc + this.frozen - this.hiddenDoc;
  }

  /**
   * After a resize, find the transcript lines the frozen rows show among the `docLines` lines of
   * the transcript drawn at the new width (`inkOf(k)`: the ink of line k).
   */
  locateHidden(docLines: number, inkOf: (k: number) => number): void {
    if (this.pendingSkipInk < 0) return;
    const want = this.pendingSkipInk;
    let lastInk = docLines - 1;
    while (lastInk >= 0 && inkOf(lastInk) === 0) lastInk--;
    let ink = 0,
      k = 0,
      blank = 0;
    for (; k < docLines; k++) {
      const n = inkOf(k);
      if (ink + n > want) break;
      // Blank lines after all the frozen ink: only as many as frozen rows show are behind them
      // (the others are live, and may fill as the stream goes on), and none at the end of the
      // transcript: those are where the stream goes on (the line being written), and a frozen
      // row hiding one would hide what fills it. Drawn again, such a line costs a blank row.
      if (n === 0 && ink === want && (k > lastInk || blank++ === this.frozenBlank)) break;
      ink += n;
    }
    this.hiddenDoc = k;
    // A line partly frozen: its rest continues on the next row, as a terminal wraps.
    this.hiddenInk = k < docLines ? want - ink : 0;
    this.pendingSkipInk = -1;
  }

  /** Freeze the next frame row (it went into the scrollback with these cells). */
  freeze(row: Row): void {
    const n = countInk(row);
    this.frozenInk += n;
    this.frozenBlank = n > 0 ? 0 : this.frozenBlank + 1;
    if (n > 0) this.frozenTail = tailAfterInk(row) ?? '';
    this.frozen++;
  }

  /**
   * Freeze the rows that scrolled off the top; their cells are let go (a reply of thousands of
   * lines keeps none of them).
   */
  freezeScrolledOff(rows: Row[], lines: string[]): void {
    while (this.frozen < rows.length && this.top + this.frozen < 0) {
      this.freeze(rows[this.frozen]!);
      rows[this.frozen - 1] = EMPTY_ROW;
      lines[this.frozen - 1] = '';
      this.hiddenDoc++;
      this.hiddenInk = 0;
    }
  }

  /**
   * The first `count` transcript lines were written for good (committed). Returns how many frame
   * rows leave the frame with them (the frozen ones, and those showing committed lines); 0 when
   * they all were behind frozen rows, which then stay.
   */
  commit(count: number, committedInk: () => number): number {
    if (count < this.hiddenDoc) {
      // Committed lines all behind frozen rows: they leave the count of what those rows show.
      this.frozenInk = Math.max(0, this.frozenInk - committedInk());
      this.hiddenDoc -= count;
      return 0;
    }
    const rows = count - this.hiddenDoc;
    const drop = this.frozen + rows;
    this.top += drop;
    this.frozen = 0;
    this.hiddenDoc = 0;
    // A partly frozen line not committed with them stays partly hidden.
    if (rows > 0) this.hiddenInk = 0;
    this.frozenInk = this.hiddenInk;
    this.frozenBlank = 0;
    return drop;
  }

  /**
   * The terminal changed size from `oldWidth` to `width` × `height`, its cursor now on screen row
   * `cursorRow` (asked of it; null: not known, taken as unmoved), the renderer's cursor having been
   * on frame row `atRow`, column `atCol`. A terminal that narrows rewraps each row into as many as
   * its ink needs, so the rows above the cursor are reckoned upwards from it. Rows gone off the top
   * are frozen, transcript rows only (below `docEnd`: footer rows the terminal pushed into its
   * scrollback, such as a padded status bar rewrapped into several rows, are no part of the
   * transcript, and their rest on screen is cleared like the others). The transcript lines they
   * show are found again at the new width by locateHidden().
   */
  resize(
    rows: readonly Row[],
    at: { row: number; col: number; docEnd: number; oldWidth: number },
    width: number,
    height: number,
    cursorRow: number | null,
  ): ResizedLayout {
    const rewrap = width < at.oldWidth;
    const rowsOf = (r: Row) => (rewrap ? Math.max(1, Math.ceil(r.inkWidth / width)) : 1);
    const curRow = Math.min(Math.max(0, at.row), Math.max(0, rows.length - 1));
    const cr = cursorRow ?? Math.min(height - 1, this.top + curRow);
    // Screen row of the top of each frame row, counting from the cursor.
    const tops: number[] = new Array(rows.length + 1);
    tops[curRow] = cr - (rewrap ? Math.floor(Math.max(0, at.col) / width) : 0);
    for (let i = curRow - 1; i >= 0; i--) tops[i] = tops[i + 1]! - rowsOf(rows[i]!);
    for (let i = curRow + 1; i <= rows.length; i++) tops[i] = tops[i - 1]! + rowsOf(rows[i - 1] ?? EMPTY_ROW);
    let f = this.frozen;
    const docEnd = Math.min(rows.length, Math.max(this.frozen, at.docEnd));
    while (f < docEnd && tops[f]! < 0) f++;
    const liveTop = rows.length === 0 ? cr : Math.max(0, Math.min(height - 1, tops[f]!));
    for (let i = this.frozen; i < f; i++) this.freeze(rows[i]!);
    this.height = height;
    // The transcript lines hidden behind frozen rows are found again by their ink at the new width.
    this.pendingSkipInk = f > 0 || this.frozenInk > 0 ? this.frozenInk : -1;
    this.hiddenInk = 0;
    if (f === 0 && this.frozenInk === 0) this.hiddenDoc = 0;
    this.top = liveTop - f;
    return { frozen: f, liveTop };
  }
}
