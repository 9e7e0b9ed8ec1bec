// The permission question as the screen draws it. While it is asked (above the status bar):
//
//   allow tool write_file: path: notes.txt  content: line 1
//   line 2
//   …                                          (at most half the screen)
//     lines 1–12 of 60: PgDn for more
//   (y) once  (n) deny  (a) always  (d) never  [esc = deny+cancel]  (1 more waiting)
//
// the whole question, never shortened: one taller than half the screen shows a window of it that
// PgUp/PgDn move, and says which lines it shows; the answer keys wrap at their groups on a
// narrow screen. Once answered, the transcript keeps it as a tool output is kept: its first
// lines and `  ... (+N lines, ^O to expand)`, all of it with ^O, then the answer.
//
// A line of megabytes (a minified file written whole) is wrapped in pieces, and only the pieces
// on screen are: what the question costs to draw is what it shows.

import type { Block } from '../../tui/transcript.js';
import { paint } from '../../tui/style.js';
import { textWidth } from '../../tui/width.js';
import { wrapText } from '../../tui/wrap.js';
import { ANSWER_KEYS } from '../permission-desk.js';
import type { ViewSettings } from './blocks.js';
import { THEME } from './theme.js';
import { LATEST_OUTPUT_LINES } from './tool-blocks.js';

/** Longer lines are wrapped in pieces of this many characters. */
const PIECE = 4096;

interface Position {
  piece: number;
  row: number;
}

/** A text in screen rows, wrapped piece by piece as rows are asked for. */
class RowText {
  private readonly pieces: string[] = [];
  /** The text's line (0-based) each piece belongs to. */
  private readonly lineOf: number[] = [];
  readonly lineCount: number;
  private width = 0;
  private readonly wrapped = new Map<number, string[]>();

  constructor(text: string) {
    const lines = text.split('\n');
    this.lineCount = lines.length;
    lines.forEach((l, i) => {
      let at = 0;
      do {
        let end = Math.min(at + PIECE, l.length);
        // Never between the two halves of a surrogate pair.
        if (end < l.length && (l.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
        this.pieces.push(l.slice(at, end));
        this.lineOf.push(i);
        at = end;
      } while (at < l.length);
    });
  }

  /** The rows of piece `i` at `width` (at least one). */
  rows(i: number, width: number): string[] {
    if (width !== this.width) {
      this.wrapped.clear();
      this.width = width;
    }
    let r = this.wrapped.get(i);
    if (!r) {
      r = wrapText(this.pieces[i]!, width);
      if (!r.length) r = [''];
      this.wrapped.set(i, r);
    }
    return r;
  }

  /** Up to `max` rows from `from`; whether they reach the end, and the line of the last. */
  take(from: Position, max: number, width: number): { rows: string[]; end: boolean; lastLine: number } {
    const rows: string[] = [];
    let { piece, row } = from;
    let last = piece;
    while (rows.length < max && piece < this.pieces.length) {
      const rs = this.rows(piece, width);
      last = piece;
      for (; row < rs.length && rows.length < max; row++) rows.push(rs[row]!);
      if (row >= rs.length) {
        piece++;
        row = 0;
      }
    }
    return { rows, end: piece >= this.pieces.length, lastLine: this.lineOf[last] ?? 0 };
  }

  /** `from` moved by `n` rows (negative: back), within the text. */
  move(from: Position, n: number, width: number): Position {
    let { piece, row } = from;
    if (n > 0) {
      while (n > 0 && piece < this.pieces.length) {
        const len = this.rows(piece, width).length;
        const step = Math.min(n, len - row);
        row += step;
        n -= step;
        if (row >= len) {
          piece++;
          row = 0;
        }
      }
    } else {
      n = -n;
      while (n > 0 && (piece > 0 || row > 0)) {
        if (row === 0) {
          piece--;
          row = this.rows(piece, width).length;
        }
        const step = Math.min(n, row);
        row -= step;
        n -= step;
      }
    }
    return { piece, row };
  }

  lineAt(p: Position): number {
    return this.lineOf[Math.min(p.piece, this.lineOf.length - 1)] ?? 0;
  }
}

/** The answer keys, wrapped at their groups (and within a group only when it is wider than the screen). */
function answerLines(keys: string, width: number, waiting: number): string[] {
  const groups = keys.split('  ');
  if (waiting) groups.push(`(${waiting} more waiting)`);
  const lines: string[] = [];
  let line = '';
  for (const g of groups) {
    if (line && textWidth(line) + 2 + textWidth(g) > width) {
      lines.push(line);
      line = g;
    } else line = line ? `${line}  ${g}` : g;
  }
  lines.push(line);
  return lines.flatMap((l) => wrapText(paint(l, THEME.permission), width));
}

/** A rule being edited: its heading, the text, where the cursor is. */
export interface RuleLine {
  head: string;
  draft: string;
  cursor: number;
}

/** The rule being edited, the character under the cursor in inverse video. */
function ruleLines(width: number, e: RuleLine): string[] {
  const at = e.draft.slice(e.cursor, e.cursor + 1) || ' ';
  const text = `${paint(e.head, THEME.permission)}${e.draft.slice(0, e.cursor)}${paint(at, { inverse: true })}${e.draft.slice(e.cursor + 1)}`;
  return wrapText(text, width);
}

/** The question while it is asked: a window of at most half the screen, moved by PgUp/PgDn. */
export class QuestionView {
  private text: RowText = new RowText('');
  private keys = ANSWER_KEYS;
  private top: Position = { piece: 0, row: 0 };
  private width = 0;
  private cache: { key: string; lines: string[] } | null = null;

  constructor(private readonly screenRows: () => number) {}

  /** Ask `text` (from its first line), answered with `keys`. */
  show(text: string, keys = ANSWER_KEYS): void {
    this.text = new RowText(text);
    this.keys = keys;
    this.top = { piece: 0, row: 0 };
    this.cache = null;
  }

  private get height(): number {
    return Math.max(2, Math.floor(this.screenRows() / 2));
  }

  /** A page down (+1) or up (−1); false when the whole question is on screen (the key is not for it). */
  scroll(pages: number): boolean {
    const width = this.width;
    if (!width) return false;
    const h = this.height;
    const atTop = this.top.piece === 0 && this.top.row === 0;
    if (atTop && this.text.take(this.top, h, width).end) return false;
    this.top = this.text.move(this.top, pages * (h - 1), width);
    this.cache = null;
    return true;
  }

  /** The question's rows in the window, `h` high; scrolled past the end, the window ends with the last line. */
  private window(h: number, width: number): ReturnType<RowText['take']> {
    const w = this.text.take(this.top, h, width);
    if (w.rows.length >= h || (this.top.piece === 0 && this.top.row === 0)) return w;
    this.top = this.text.move(this.top, w.rows.length - h, width);
    return this.text.take(this.top, h, width);
  }

  /** Which lines the window shows and how to scroll it (none when it shows them all). */
  private whereLines(w: ReturnType<RowText['take']>, width: number): string[] {
    const atTop = this.top.piece === 0 && this.top.row === 0;
    if (atTop && w.end) return [];
    const first = this.text.lineAt(this.top) + 1;
    const last = w.lastLine + 1;
    const keys = atTop ? 'PgDn for more' : w.end ? 'PgUp to go back' : 'PgUp/PgDn to scroll';
    const where = first === last ? `line ${first}` : `lines ${first}–${last}`;
    return wrapText(paint(`  ${where} of ${this.text.lineCount}: ${keys}`, THEME.meta), width);
  }

  /** The question's window, then the answer keys, or the rule being edited (`edit`) in their place. */
  render(width: number, waiting: number, edit?: RuleLine): string[] {
    const h = this.height;
    if (width !== this.width) {
      // Rewrapped: the window keeps its line.
      this.top = { piece: this.top.piece, row: 0 };
      this.width = width;
    }
    const editKey = edit ? `${edit.cursor}:${edit.head}${edit.draft}` : '';
    const key = `${width}:${h}:${waiting}:${this.top.piece}:${this.top.row}:${editKey}`;
    if (this.cache?.key === key) return this.cache.lines;
    const w = this.window(h, width);
    const out = [''];
    for (const r of w.rows) out.push(paint(r, THEME.permission));
    for (const l of this.whereLines(w, width)) out.push(l);
    for (const l of edit ? ruleLines(width, edit) : answerLines(this.keys, width, waiting)) out.push(l);
    this.cache = { key: `${width}:${h}:${waiting}:${this.top.piece}:${this.top.row}:${editKey}`, lines: out };
    return out;
  }
}

/** An answered question in the transcript, collapsed like the latest tool output (^O: whole). */
export class PermissionRecord implements Block {
  final = true;
  private readonly text: RowText;
  private cache: { key: string; lines: string[] } | null = null;

  constructor(
    private readonly settings: ViewSettings,
    question: string,
    private readonly answer: string,
  ) {
    this.text = new RowText(question);
  }

  render(width: number): string[] {
    const all = this.settings.expandOutput;
    const key = `${width}:${all}`;
    if (this.cache?.key === key) return this.cache.lines;
    const out = [''];
    const start = { piece: 0, row: 0 };
    if (all) {
      for (const r of this.text.take(start, Number.POSITIVE_INFINITY, width).rows) out.push(paint(r, THEME.permission));
    } else {
      const w = this.text.take(start, LATEST_OUTPUT_LINES, width);
      for (const r of w.rows) out.push(paint(r, THEME.permission));
      if (!w.end) {
        // The lines not shown whole (the last one shown may go on).
        const next = this.text.lineAt(this.text.move(start, w.rows.length, width));
        const rest = this.text.lineCount - (next === w.lastLine ? w.lastLine : w.lastLine + 1);
        out.push(paint(`  ... (+${rest} line${rest === 1 ? '' : 's'}, ^O to expand)`, THEME.meta));
      }
    }
    out.push(paint(this.answer, THEME.permission));
    this.cache = { key, lines: out };
    return out;
  }
}
