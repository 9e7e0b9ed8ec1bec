// A multi-line line editor: the text is a list of lines (embedded newlines from a paste or
// Shift+Enter), the cursor moves by grapheme, Ctrl-A/E/B/F/U/K/Y/D and friends work as in
// readline, Up/Down walk the history on the first/last line. Rendering wraps by character and
// only looks at the lines around the cursor, so a paste of megabytes stays responsive.

import { CURSOR_MARKER } from './escapes.js';
import { History } from './history.js';
import { keyId, type InputEvent } from './keys.js';
import { TAB_WIDTH } from './wrap.js';
import { graphemeWidth, isPrintableAscii, segmentGraphemes, textWidth, visibleWidth } from './width.js';

export type EditResult = 'changed' | 'moved' | 'submit' | 'eof' | 'ignored';

export interface EditorRenderOptions {
  /** Before the first row (styled text allowed); its width is reserved on every row. */
  prompt?: string;
  /** Before every other row; default: spaces as wide as the prompt. */
  indent?: string;
  /** Most rows to show; the view follows the cursor. */
  maxRows?: number;
  /** Put the cursor marker in (for the hardware cursor and IME). Default true. */
  cursor?: boolean;
}

export interface EditorView {
  lines: string[];
  /** Where the cursor is drawn, in the returned lines. */
  cursorRow: number;
  cursorCol: number;
  /** Rows in the whole text at this width, when known cheaply (small texts); else -1. */
  totalRows: number;
}

const WORD = /[\p{L}\p{N}_]/u;
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

interface RowCache {
  text: string;
  avail: number;
  starts: number[];
}

const WINDOW = 64;
const BLOCK = 2048;
const LONG_LINE = 16_384;

/** The grapheme boundary before offset c in s (looking only at a window before it). */
function boundaryBefore(s: string, c: number): number {
  if (c <= 0) return 0;
  const a = Math.max(0, c - WINDOW);
  let b = a;
  for (const g of segmentGraphemes(s, a, c)) b = g.index;
  return b;
}

/** The grapheme boundary after offset c in s. */
function boundaryAfter(s: string, c: number): number {
  if (c >= s.length) return s.length;
  for (const g of segmentGraphemes(s, c, Math.min(s.length, c + WINDOW))) return g.index + g.segment.length;
  return s.length;
}

/** The nearest grapheme boundary at or after c. */
function snapBoundary(s: string, c: number): number {
  if (c <= 0 || c >= s.length) return Math.max(0, Math.min(c, s.length));
  const b = boundaryBefore(s, c + 1);
  return b === c ? c : boundaryAfter(s, b);
}

export class LineEditor {
  private lines: string[] = [''];
  private row = 0;
  private col = 0;
  private killBuffer = '';
  private lastWasKill = false;
  private rowCache: RowCache[] = [];
  private blockCache = new Map<string, number[]>();
  private viewTop: { line: number; start: number } = { line: 0, start: 0 };
  readonly history: History;

  constructor(opts: { history?: History } = {}) {
    this.history = opts.history ?? new History();
  }

  get text(): string {
    return this.lines.length === 1 ? this.lines[0]! : this.lines.join('\n');
  }

  get isEmpty(): boolean {
    return this.lines.length === 1 && this.lines[0] === '';
  }

  get lineCount(): number {
    return this.lines.length;
  }

  /** Cursor as (line, offset in that line). */
  get cursor(): { line: number; offset: number } {
    return { line: this.row, offset: this.col };
  }

  /** Cursor as an offset into `text`. */
  get cursorOffset(): number {
    let n = 0;
    for (let i = 0; i < this.row; i++) n += this.lines[i]!.length + 1;
    return n + this.col;
  }

  get kill(): string {
    return this.killBuffer;
  }

  /** The current line up to the cursor (for completion and `:shortcode:` expansion). */
  get textBeforeCursor(): string {
    return this.lines[this.row]!.slice(0, this.col);
  }

  /** Replace the `count` UTF-16 units before the cursor (on its line) by `text` (a completion). */
  replaceBeforeCursor(count: number, text: string): void {
    const n = Math.max(0, Math.min(count, this.col));
    const line = this.lines[this.row]!;
    this.lines[this.row] = line.slice(0, this.col - n) + line.slice(this.col);
    this.col -= n;
    this.insert(text);
    if (!text) this.edited();
  }

  /** Replace the whole text; the cursor goes to the end (or to `offset`). */
  setText(text: string, offset?: number): void {
    this.lines = text.replace(CONTROL, (c) => (c === '\n' || c === '\t' ? c : '')).split('\n');
    this.rowCache = [];
    if (offset === undefined) {
      this.row = this.lines.length - 1;
      this.col = this.lines[this.row]!.length;
    } else {
      let o = Math.max(0, Math.min(offset, text.length));
      let r = 0;
      while (r < this.lines.length - 1 && o > this.lines[r]!.length) {
        o -= this.lines[r]!.length + 1;
        r++;
      }
      this.row = r;
      this.col = Math.min(o, this.lines[r]!.length);
    }
    this.viewTop = { line: 0, start: 0 };
  }

  clear(): void {
    this.setText('');
  }

  /** Text as typed (control characters dropped; newlines and tabs kept). */
  insert(text: string): void {
    const clean = text.replace(CONTROL, '');
    if (!clean) return;
    const parts = clean.split('\n');
    const line = this.lines[this.row]!;
    const before = line.slice(0, this.col),
      after = line.slice(this.col);
    if (parts.length === 1) {
      this.lines[this.row] = before + clean + after;
      this.col += clean.length;
    } else {
      const mid = parts.slice(1, -1);
      const last = parts[parts.length - 1]!;
      this.lines.splice(this.row, 1, before + parts[0], ...mid, last + after);
      this.rowCache.splice(this.row, 1, ...new Array<RowCache>(parts.length));
      this.row += parts.length - 1;
      this.col = last.length;
    }
    this.edited();
  }

  /** A paste: inserted literally (CR as newline), never submitted. */
  insertLiteral(text: string): void {
    this.insert(text.replace(/\r\n?/g, '\n'));
  }

  private edited(): void {
    this.lastWasKill = false;
    this.history.reset();
  }

  private prevBoundary(): number {
    return boundaryBefore(this.lines[this.row]!, this.col);
  }

  private nextBoundary(): number {
    return boundaryAfter(this.lines[this.row]!, this.col);
  }

  left(): boolean {
    if (this.col > 0) this.col = this.prevBoundary();
    else if (this.row > 0) {
      this.row--;
      this.col = this.lines[this.row]!.length;
    } else return false;
    return true;
  }

  right(): boolean {
    if (this.col < this.lines[this.row]!.length) this.col = this.nextBoundary();
    else if (this.row < this.lines.length - 1) {
      this.row++;
      this.col = 0;
    } else return false;
    return true;
  }

  home(): boolean {
    if (this.col === 0) return false;
    this.col = 0;
    return true;
  }

  end(): boolean {
    const n = this.lines[this.row]!.length;
    if (this.col === n) return false;
    this.col = n;
    return true;
  }

  wordLeft(): boolean {
    if (this.col === 0) return this.left();
    const line = this.lines[this.row]!;
    let c = this.col;
    while (c > 0 && !WORD.test(line[c - 1]!)) c--;
    while (c > 0 && WORD.test(line[c - 1]!)) c--;
    this.col = this.snap(c);
    return true;
  }

  wordRight(): boolean {
    const line = this.lines[this.row]!;
    if (this.col === line.length) return this.right();
    let c = this.col;
    while (c < line.length && !WORD.test(line[c]!)) c++;
    while (c < line.length && WORD.test(line[c]!)) c++;
    this.col = this.snap(c);
    return true;
  }

  /** The nearest grapheme boundary at or after offset c. */
  private snap(c: number): number {
    return snapBoundary(this.lines[this.row]!, c);
  }

  backspace(): boolean {
    if (this.col > 0) {
      const p = this.prevBoundary();
      const line = this.lines[this.row]!;
      this.lines[this.row] = line.slice(0, p) + line.slice(this.col);
      this.col = p;
    } else if (this.row > 0) {
      const prev = this.lines[this.row - 1]!;
      this.lines.splice(this.row - 1, 2, prev + this.lines[this.row]!);
      this.rowCache.splice(this.row - 1, 2);
      this.row--;
      this.col = prev.length;
    } else return false;
    this.edited();
    return true;
  }

  /** Delete the grapheme under the cursor (not into the kill buffer). */
  deleteForward(): boolean {
    const line = this.lines[this.row]!;
    if (this.col < line.length) {
      this.lines[this.row] = line.slice(0, this.col) + line.slice(this.nextBoundary());
    } else if (this.row < this.lines.length - 1) {
      this.lines.splice(this.row, 2, line + this.lines[this.row + 1]!);
      this.rowCache.splice(this.row, 2);
    } else return false;
    this.edited();
    return true;
  }

  private killed(text: string, before: boolean): void {
    // Consecutive kills add up, as in readline, so Ctrl-Y gives back all of it.
    this.killBuffer = this.lastWasKill ? (before ? text + this.killBuffer : this.killBuffer + text) : text;
    this.history.reset();
    this.lastWasKill = true;
  }

  /** Ctrl-U: kill from the start of the line to the cursor (at the start: the newline before). */
  killToStart(): boolean {
    const line = this.lines[this.row]!;
    if (this.col === 0) {
      if (this.row === 0) return false;
      this.backspace();
      this.killed('\n', true);
      return true;
    }
    const k = line.slice(0, this.col);
    this.lines[this.row] = line.slice(this.col);
    this.col = 0;
    this.killed(k, true);
    return true;
  }

  /** Ctrl-K: kill from the cursor to the end of the line (at the end: the newline after). */
  killToEnd(): boolean {
    const line = this.lines[this.row]!;
    if (this.col === line.length) {
      if (this.row === this.lines.length - 1) return false;
      this.deleteForward();
      this.killed('\n', false);
      return true;
    }
    const k = line.slice(this.col);
    this.lines[this.row] = line.slice(0, this.col);
    this.killed(k, false);
    return true;
  }

  /** Ctrl-W / Alt-Backspace: kill the word before the cursor. */
  killWordBack(): boolean {
    const end = this.col;
    if (end === 0) return this.backspace();
    this.wordLeft();
    const line = this.lines[this.row]!;
    const k = line.slice(this.col, end);
    this.lines[this.row] = line.slice(0, this.col) + line.slice(end);
    this.killed(k, true);
    return true;
  }

  /** Alt-D: kill the word after the cursor. */
  killWordForward(): boolean {
    const start = this.col;
    const line = this.lines[this.row]!;
    if (start === line.length) return false;
    this.wordRight();
    const k = line.slice(start, this.col);
    this.lines[this.row] = line.slice(0, start) + line.slice(this.col);
    this.col = start;
    this.killed(k, false);
    return true;
  }

  /** Ctrl-Y: insert the kill buffer. */
  yank(): boolean {
    if (!this.killBuffer) return false;
    this.insert(this.killBuffer);
    return true;
  }

  /** Up: the line above, or the previous history entry from the first line. */
  up(): boolean {
    if (this.row > 0) {
      this.moveVertical(-1);
      return true;
    }
    const h = this.history.prev(this.text);
    if (h === null) return false;
    this.setText(h);
    return true;
  }

  /** Down: the line below, or the next history entry (then the saved live line) from the last line. */
  down(): boolean {
    if (this.row < this.lines.length - 1) {
      this.moveVertical(1);
      return true;
    }
    const h = this.history.next();
    if (h === null) return false;
    this.setText(h);
    return true;
  }

  private moveVertical(d: number): void {
    const col = textWidth(this.lines[this.row]!.slice(0, this.col));
    this.row += d;
    const line = this.lines[this.row]!;
    let w = 0;
    let off = 0;
    for (const g of segmentGraphemes(line)) {
      const gw = graphemeWidth(g.segment);
      if (w + gw > col) break;
      w += gw;
      off = g.index + g.segment.length;
    }
    this.col = off;
  }

  /** Submit: the text goes into the history and the editor is emptied; returns the text. */
  submit(): string {
    const t = this.text;
    this.history.add(t);
    this.clear();
    return t;
  }

  /**
   * The default key bindings. Enter gives 'submit' (the caller calls submit()); Shift+Enter,
   * Alt+Enter and Ctrl-J insert a newline; Ctrl-D on an empty editor gives 'eof'.
   */
  handle(ev: InputEvent): EditResult {
    if (ev.type === 'text') {
      this.insert(ev.text);
      return 'changed';
    }
    if (ev.type === 'paste') {
      this.insertLiteral(ev.text);
      return 'changed';
    }
    if (ev.type !== 'key') return 'ignored';
    const id = keyId(ev.key);
    const moved = (b: boolean): EditResult => (b ? 'moved' : 'ignored');
    const changed = (b: boolean): EditResult => (b ? 'changed' : 'ignored');
    const wasKill = this.lastWasKill;
    this.lastWasKill = false;
    switch (id) {
      case 'enter':
        return 'submit';
      case 'shift+enter':
      case 'alt+enter':
      case 'ctrl+j':
        this.insert('\n');
        return 'changed';
      case 'backspace':
      case 'ctrl+h':
      case 'shift+backspace':
        return changed(this.backspace());
      case 'delete':
        return changed(this.deleteForward());
      case 'ctrl+d':
        return this.isEmpty ? 'eof' : changed(this.deleteForward());
      case 'left':
      case 'ctrl+b':
        return moved(this.left());
      case 'right':
      case 'ctrl+f':
        return moved(this.right());
      case 'home':
      case 'ctrl+a':
        return moved(this.home());
      case 'end':
      case 'ctrl+e':
        return moved(this.end());
      case 'ctrl+left':
      case 'alt+b':
      case 'alt+left':
        return moved(this.wordLeft());
      case 'ctrl+right':
      case 'alt+f':
      case 'alt+right':
        return moved(this.wordRight());
      case 'up':
        return this.row > 0 ? moved(this.up()) : changed(this.up());
      case 'down':
        return this.row < this.lines.length - 1 ? moved(this.down()) : changed(this.down());
      case 'ctrl+u':
        this.lastWasKill = wasKill;
        return changed(this.killToStart());
      case 'ctrl+k':
        this.lastWasKill = wasKill;
        return changed(this.killToEnd());
      case 'ctrl+w':
      case 'alt+backspace':
        this.lastWasKill = wasKill;
        return changed(this.killWordBack());
      case 'alt+d':
        this.lastWasKill = wasKill;
        return changed(this.killWordForward());
      case 'ctrl+y':
        return changed(this.yank());
      case 'tab':
        this.insert('\t');
        return 'changed';
      case 'space':
      case 'shift+space':
        this.insert(' ');
        return 'changed';
      default:
        return 'ignored';
    }
  }

  // ---- rendering ---------------------------------------------------------------------------

  /** Char wrap of s[a, b) from column 0: the start offset of each row. */
  private layout(text: string, a: number, b: number, avail: number, starts: number[]): void {
    let w = 0;
    for (const g of segmentGraphemes(text, a, b)) {
      const gw = g.segment === '\t' ? TAB_WIDTH - (w % TAB_WIDTH) : graphemeWidth(g.segment);
      if (w + gw > avail && w > 0) {
        starts.push(g.index);
        w = 0;
      }
      w += g.segment === '\t' ? TAB_WIDTH - (w % TAB_WIDTH) : gw;
    }
    if (b === text.length && w >= avail && b > a) starts.push(b);
  }

  /**
   * The rows of line i at `avail` columns (char wrap): their start offsets and where the last one
   * ends.
   */
  private rows(i: number, avail: number): { starts: number[]; end: number } {
    const text = this.lines[i]!;
    const len = text.length;
    if (len > LONG_LINE && !isPrintableAscii(text)) return this.blockRows(i, avail);
    const c = this.rowCache[i];
    if (c && c.text === text && c.avail === avail) return { starts: c.starts, end: len };
    const starts = isPrintableAscii(text) ? asciiRows(len, avail) : this.relayout(text, avail, c);
    this.rowCache[i] = { text, avail, starts };
    return { starts, end: len };
  }

  /**
   * A very long line that is not plain ASCII is laid out in blocks of BLOCK characters (each
   * starting a row) and only the blocks near the cursor, so its cost does not grow with its length.
   */
  private blockRows(i: number, avail: number): { starts: number[]; end: number } {
    const text = this.lines[i]!;
    const len = text.length;
    const n = Math.ceil(len / BLOCK);
    const center = Math.floor((i === this.row ? this.col : i < this.row ? len : 0) / BLOCK);
    const b0 = Math.max(0, center - 2),
      b1 = Math.min(n - 1, center + 2);
    const edge = (k: number) => (k <= 0 ? 0 : k >= n ? len : snapBoundary(text, k * BLOCK));
    const starts: number[] = [];
    for (let k = b0; k <= b1; k++) for (const r of this.blockLayout(text, edge(k), edge(k + 1), avail)) starts.push(r);
    return { starts, end: edge(b1 + 1) };
  }

  /** Row starts of the block text[a, b), cached by its text. */
  private blockLayout(text: string, a: number, b: number, avail: number): number[] {
    const key = `${avail}\u0000${text.slice(a, b)}${b === text.length ? '\u0001' : ''}`;
    let rel = this.blockCache.get(key);
    if (!rel) {
      const abs: number[] = [a];
      this.layout(text, a, b, avail, abs);
      rel = abs.map((x) => x - a);
      if (this.blockCache.size > 256) this.blockCache.clear();
      this.blockCache.set(key, rel);
    }
    return rel.map((r) => r + a);
  }

  /**
   * Char wrap of a line that is not plain ASCII. Rows of the last layout `c` that end well before
   * the first changed character are still right (a cluster may reach back a little): only the
   * rest is measured again.
   */
  private relayout(text: string, avail: number, c: RowCache | undefined): number[] {
    const starts = c && c.avail === avail ? rowsBefore(c, firstDifference(c.text, text)) : [0];
    this.layout(text, starts[starts.length - 1]!, text.length, avail, starts);
    return starts;
  }

  /** Rows of text for `width` columns with the cursor, showing at most maxRows rows around it. */
  render(width: number, opts: EditorRenderOptions = {}): EditorView {
    const prompt = opts.prompt ?? '';
    const pw = visibleWidth(prompt);
    const indent = opts.indent ?? ' '.repeat(pw);
    const avail = Math.max(1, width - Math.max(pw, visibleWidth(indent)));
    const maxRows = Math.max(1, opts.maxRows ?? Infinity);
    // Rows of the lines around the cursor: enough to fill any window that holds it.
    const span = Number.isFinite(maxRows) ? maxRows : this.lines.length;
    const first = Math.max(0, this.row - span),
      last = Math.min(this.lines.length - 1, this.row + span);
    const { vrows, cur } = this.visualRows(first, last, avail);
    const top = this.scrollTo(vrows, cur, maxRows);
    const view = this.draw(vrows.slice(top, top + maxRows), cur - top, width, prompt, indent, opts.cursor ?? true);
    const small = this.lines.length <= 2 * span + 1;
    return { ...view, totalRows: small && first === 0 && last === this.lines.length - 1 ? vrows.length : -1 };
  }

  /** The rows of lines first..last, and the one the cursor is on. */
  private visualRows(first: number, last: number, avail: number): { vrows: VisualRow[]; cur: number } {
    const vrows: VisualRow[] = [];
    let cur = -1;
    for (let i = first; i <= last; i++) {
      const { starts: st, end: lineEnd } = this.rows(i, avail);
      for (let k = 0; k < st.length; k++) {
        const start = st[k]!;
        if (i === this.row && start <= this.col) cur = vrows.length;
        vrows.push({ line: i, start, end: k + 1 < st.length ? st[k + 1]! : lineEnd });
      }
    }
    return { vrows, cur: cur < 0 ? vrows.length - 1 : cur };
  }

  /** The first row shown: where the view was unless the cursor left it. */
  private scrollTo(vrows: readonly VisualRow[], cur: number, maxRows: number): number {
    let top = vrows.findIndex((v) => v.line === this.viewTop.line && v.start === this.viewTop.start);
    if (top < 0) top = Math.max(0, cur - maxRows + 1);
    if (cur < top) top = cur;
    if (cur >= top + maxRows) top = cur - maxRows + 1;
    if (vrows.length - top < maxRows) top = Math.max(0, vrows.length - maxRows);
    this.viewTop = { line: vrows[top]!.line, start: vrows[top]!.start };
    return top;
  }

  /** The rows shown, the cursor (on row `cur` of them) marked. */
  private draw(
    shown: readonly VisualRow[],
    cur: number,
    width: number,
    prompt: string,
    indent: string,
    showCursor: boolean,
  ): Omit<EditorView, 'totalRows'> {
    const lines: string[] = [];
    let cursorRow = 0,
      cursorCol = 0;
    shown.forEach((v, r) => {
      const lead = v.line === 0 && v.start === 0 ? prompt : indent;
      let body = expandTabs(this.lines[v.line]!.slice(v.start, v.end));
      if (r === cur) {
        const before = expandTabs(this.lines[v.line]!.slice(v.start, this.col));
        cursorRow = r;
        cursorCol = Math.min(width - 1, visibleWidth(lead) + textWidth(before));
        if (showCursor) body = before + CURSOR_MARKER + body.slice(before.length);
      }
      lines.push(lead + body);
    });
    return { lines, cursorRow, cursorCol };
  }
}

type VisualRow = { line: number; start: number; end: number };

/** Row starts of a plain ASCII line of `len` characters. */
function asciiRows(len: number, avail: number): number[] {
  const starts: number[] = [];
  for (let s = 0; s < len; s += avail) starts.push(s);
  if (starts.length === 0 || len % avail === 0) starts.push(len);
  return starts;
}

/** The first offset where two texts differ. */
function firstDifference(a: string, b: string): number {
  let p = 0;
  const m = Math.min(a.length, b.length);
  while (p < m && a.charCodeAt(p) === b.charCodeAt(p)) p++;
  return p;
}

/** The rows of layout `c` that start well before offset p (the last one's end is measured again). */
function rowsBefore(c: RowCache, p: number): number[] {
  let k = 0;
  while (k + 1 < c.starts.length && c.starts[k + 1]! + 8 < p) k++;
  return c.starts.slice(0, k + 1);
}

function expandTabs(s: string): string {
  if (!s.includes('\t')) return s;
  let out = '';
  let w = 0;
  for (const g of segmentGraphemes(s)) {
    if (g.segment === '\t') {
      const n = TAB_WIDTH - (w % TAB_WIDTH);
      out += ' '.repeat(n);
      w += n;
    } else {
      out += g.segment;
      w += graphemeWidth(g.segment);
    }
  }
  return out;
}
