// The transcript: an ordered list of blocks, each rendered once per width and kept until it
// changes, with running line offsets so any window of lines is found by binary search. Scrolling
// through a long transcript therefore never renders anything again.

/** Anything that draws itself as lines of at most `width` columns. */
export interface Component {
  render(width: number): string[];
}

/**
 * A transcript block. `final` blocks no longer change (inline mode writes them into the scrollback,
 * the last one not while it `awaitsHighlighter()`).
 */
export interface Block extends Component {
  readonly final?: boolean;
  /** Drew code plain that the highlighter, once ready for it, colours (a reply's markdown). */
  awaitsHighlighter?(): boolean;
}

interface Entry {
  block: Block;
  lines: string[] | null;
  width: number;
}

export class Transcript {
  private entries: Entry[] = [];
  private index = new Map<Block, number>();
  /** starts[i] = first line of entry i; valid for i <= validTo. */
  private starts: number[] = [0];
  private validTo = 0;
  private width = -1;
  /** Bumped on every change; the renderer compares it to skip work. */
  version = 0;

  get length(): number {
    return this.entries.length;
  }

  blockAt(i: number): Block {
    return this.entries[i]!.block;
  }

  indexOf(block: Block): number {
    return this.index.get(block) ?? -1;
  }

  /** Appends a block (or inserts it before block `before`). */
  add(block: Block, before?: Block): void {
    if (this.index.has(block)) throw new Error('block is already in the transcript');
    const at = before === undefined ? this.entries.length : this.indexOf(before);
    if (at < 0) throw new Error('no such block');
    this.entries.splice(at, 0, { block, lines: null, width: -1 });
    if (at === this.entries.length - 1) this.index.set(block, at);
    else this.reindex(at);
    this.invalidateFrom(at);
  }

  remove(block: Block): void {
    const at = this.indexOf(block);
    if (at < 0) return;
    this.entries.splice(at, 1);
    this.index.delete(block);
    this.reindex(at);
    this.invalidateFrom(at);
  }

  clear(): void {
    this.entries = [];
    this.index.clear();
    this.invalidateFrom(0);
  }

  /** The block's content changed: render it again when next needed. */
  changed(block: Block): void {
    const at = this.indexOf(block);
    if (at < 0) return;
    this.entries[at]!.lines = null;
    this.invalidateFrom(at);
  }

  /** Everything changed (a theme or a setting that every block reads). */
  changedAll(): void {
    this.changedWhere(() => true);
  }

  /** The blocks `which` picks changed: render them again when next needed. */
  changedWhere(which: (block: Block) => boolean): void {
    let first = -1;
    this.entries.forEach((e, i) => {
      if (!which(e.block)) return;
      e.lines = null;
      if (first < 0) first = i;
    });
    if (first >= 0) this.invalidateFrom(first);
  }

  /** Forget the rendered lines of blocks [0, n) (inline mode never draws them again). */
  release(n: number): void {
    for (let i = 0; i < n && i < this.entries.length; i++) this.entries[i]!.lines = null;
  }

  private reindex(from: number): void {
    for (let i = from; i < this.entries.length; i++) this.index.set(this.entries[i]!.block, i);
  }

  private invalidateFrom(i: number): void {
    this.validTo = Math.min(this.validTo, i);
    this.version++;
  }

  private setWidth(width: number): void {
    if (width === this.width) return;
    this.width = width;
    this.validTo = 0;
  }

  /** Lines of block i at the current width. */
  blockLines(i: number, width: number): string[] {
    this.setWidth(width);
    const e = this.entries[i]!;
    if (!e.lines || e.width !== width) {
      e.lines = e.block.render(width);
      e.width = width;
    }
    return e.lines;
  }

  private ensureStarts(upTo: number, width: number): void {
    this.setWidth(width);
    if (this.starts.length < this.entries.length + 1) this.starts.length = this.entries.length + 1;
    for (let i = this.validTo; i < upTo && i < this.entries.length; i++) {
      this.starts[i + 1] = this.starts[i]! + this.blockLines(i, width).length;
      this.validTo = i + 1;
    }
  }

  /** Blocks whose lines and place at `width` are not known yet (after a resize: all of them, until laid out again). */
  notLaidOut(width: number): number {
    return this.width === width ? this.entries.length - this.validTo : this.entries.length;
  }

  /** Lay the blocks out at `width`, from where it stopped, until done or `enough()`; whether it is done. */
  layOutSome(width: number, enough: () => boolean): boolean {
    this.setWidth(width);
    while (this.validTo < this.entries.length) {
      if (enough()) return false;
      this.ensureStarts(this.validTo + 1, width);
    }
    return true;
  }

  /** The last `n` lines at `width` (fewer when the transcript has fewer), with only the last blocks rendered. */
  tail(width: number, n: number): string[] {
    const out: string[] = [];
    for (let i = this.entries.length - 1; i >= 0 && out.length < n; i--) {
      const ls = this.blockLines(i, width);
      out.unshift(...ls.slice(Math.max(0, ls.length - (n - out.length))));
    }
    return out;
  }

  /** Up to `n` lines at `width` from line `offset` of block `index` on, with only those blocks rendered. */
  linesFrom(width: number, index: number, offset: number, n: number): string[] {
    const out: string[] = [];
    for (let i = index; i < this.entries.length && out.length < n; i++) {
      const ls = this.blockLines(i, width);
      for (let k = i === index ? offset : 0; k < ls.length && out.length < n; k++) out.push(ls[k]!);
    }
    return out;
  }

  /**
   * The line `n` lines from line `offset` of block `index` (negative: up; `offset` may be the
   * block's length, the place after it), with only the blocks passed rendered: no line numbers
   * needed. Held at the first line and at the last.
   */
  moveLines(width: number, index: number, offset: number, n: number): { index: number; offset: number } {
    let i = index;
    let k = offset + n;
    while (k < 0 && i > 0) k += this.blockLines(--i, width).length;
    if (k < 0) return { index: 0, offset: 0 };
    for (;;) {
      const len = this.blockLines(i, width).length;
      if (k < len) return { index: i, offset: k };
      if (i >= this.entries.length - 1) return { index: i, offset: Math.max(0, len - 1) };
      k -= len;
      i++;
    }
  }

  /** Total lines at `width`. */
  lineCount(width: number): number {
    this.ensureStarts(this.entries.length, width);
    return this.starts[this.entries.length]!;
  }

  /** First line of block i. */
  blockStart(i: number, width: number): number {
    this.ensureStarts(i, width);
    return this.starts[i]!;
  }

  /** The block holding line `line` at `width` (the last one past the end), and the line's place in it. */
  blockAtLine(width: number, line: number): { index: number; offset: number } {
    this.lineCount(width);
    const index = this.findBlock(line);
    return { index, offset: line - this.starts[index]! };
  }

  /** Binary search for the block holding line `line` (starts laid out). */
  private findBlock(line: number): number {
    let lo = 0,
      hi = this.entries.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= line) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Lines [from, to) of the whole transcript. */
  lines(width: number, from: number, to: number): string[] {
    const total = this.lineCount(width);
    to = Math.min(to, total);
    const out: string[] = [];
    if (from >= to) return out;
    for (let b = this.findBlock(from); b < this.entries.length && out.length < to - from; b++) {
      const ls = this.blockLines(b, width);
      const s = this.starts[b]!;
      for (let k = Math.max(0, from - s); k < ls.length && s + k < to; k++) out.push(ls[k]!);
    }
    return out;
  }
}
