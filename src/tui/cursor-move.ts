// The shortest bytes that move the terminal's cursor from one cell to another. A frame of a
// streamed reply is mostly text; what is left is moves (to the end of the growing line, to the
// spinner, back to the input box), so each move is chosen among the ways to make it by its size
// on the wire. A line feed counts two bytes on a terminal whose line feed returns (a tty keeps
// ONLCR in raw mode and sends CR LF). A vertical tab is a line feed to every terminal (xterm,
// VT100 and ECMA-48's successors, tmux, screen, the Linux console) that keeps the column, and the
// tty passes it through as it is: one byte a row down.

import { cursorDown, cursorTo, cursorUp } from './escapes.js';

export interface MoveOptions {
  /** A line feed also returns to column 0 (and costs two bytes on the wire). */
  lineFeedReturns: boolean;
  /** Line feeds from the cursor's row down to the target row scroll nothing. */
  lineFeedsSafe: boolean;
  /** Up/down moves reach the target row (no margin in between stops them). */
  rowsSafe: boolean;
  /** Rows are screen rows and the move may be absolute (CUP); else relative moves only. */
  absolute: boolean;
}

/** Bytes on the wire for `s`. */
export function wireLength(s: string, lineFeedReturns: boolean): number {
  if (!lineFeedReturns) return s.length;
  let n = s.length;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

/** `n` rows down, scrolling at the bottom margin as a line feed does, the column kept. */
export const lineFeeds = (n: number): string => '\v'.repeat(n);

const forward = (n: number): string => (n === 1 ? '\x1b[C' : `\x1b[${n}C`);
const back = (n: number): string => (n === 1 ? '\x1b[D' : `\x1b[${n}D`);

/** Along the row, from `from` (-1: not known) to `to`. */
function horizontal(from: number, to: number): string {
  if (from === to) return '';
  if (to === 0) return '\r';
  let best = `\x1b[${to + 1}G`;
  const consider = (s: string) => {
    if (s.length < best.length) best = s;
  };
  consider(`\r${forward(to)}`);
  if (from >= 0) consider(to > from ? forward(to - from) : back(from - to));
  return best;
}

/**
 * From (fromRow, fromCol) to (toRow, toCol); a negative fromCol is not known (after a write to
 * the last column the terminal's column is pending a wrap), a negative fromRow likewise when the
 * move is absolute.
 */
export function cursorMove(fromRow: number, fromCol: number, toRow: number, toCol: number, o: MoveOptions): string {
  if (fromRow === toRow && fromCol === toCol && fromCol >= 0) return '';
  const cands: string[] = o.absolute ? [cursorTo(toRow, toCol)] : [];
  if (o.rowsSafe && (fromRow >= 0 || !o.absolute)) relativeMoves(cands, toRow - fromRow, fromCol, toCol, o);
  return shortest(cands, o.lineFeedReturns);
}

/** The moves `dr` rows down (up when negative) and along to `toCol`, added to `cands`. */
function relativeMoves(cands: string[], dr: number, fromCol: number, toCol: number, o: MoveOptions): void {
  const along = horizontal(fromCol, toCol);
  if (dr === 0) {
    cands.push(along);
    return;
  }
  cands.push((dr > 0 ? cursorDown(dr) : cursorUp(-dr)) + along);
  if (dr < 0 || !o.lineFeedsSafe) return;
  if (o.lineFeedReturns) cands.push('\n'.repeat(dr) + horizontal(0, toCol));
  cands.push(lineFeeds(dr) + along);
}

/** The first of the fewest bytes on the wire. */
function shortest(cands: readonly string[], lineFeedReturns: boolean): string {
  let best = cands[0]!;
  let cost = wireLength(best, lineFeedReturns);
  for (let i = 1; i < cands.length; i++) {
    const c = wireLength(cands[i]!, lineFeedReturns);
    if (c < cost) {
      best = cands[i]!;
      cost = c;
    }
  }
  return best;
}
