// Markdown that arrives in pieces (a streamed reply). Blocks that can no longer change are lexed
// and rendered once and kept; on each new piece only the text after them — the open block — is
// lexed again, so a long answer costs time in proportion to its length, not its square.
//
// What a block keeps is its place in the source and its lines at the last width: a token tree is
// let go once the block is drawn (at another width the block's text is lexed again), and a
// finished stream keeps one copy of its lines, not one per block as well.
//
// A list goes on until a blank line and something else, so a long one would be the open block
// for all of its items: once it has LIST_SPLIT_AT items, all but its last LIST_KEEP become a part
// drawn once, as the whole list draws them (their numbers, its widest marker, its looseness), and
// the open text goes on with the rest. When the rest cannot be drawn that way any more (a wider
// number, a blank line making the list loose), the parts go back into the open text.

import type { Token, Tokens } from 'marked';
import { highlightGeneration, plainCodeDraws } from './highlight.js';
import { type ListPart, lexMarkdown, listMarkerWidth, makeContext, type MarkdownOptions, renderBlocks } from './markdown.js';

const LIST_SPLIT_AT = 64;
const LIST_KEEP = 16;
/** A table at the start of the open text with this many rows keeps all but its last TABLE_KEEP lexed. */
const TABLE_KEEP_AT = 64;
const TABLE_KEEP = 16;

/** How a part of a list is drawn as in the whole list. */
interface ListCont {
  /** The number of its first item; '' for a bullet list. */
  start: number | '';
  loose: boolean;
  markerWidth: number;
}

interface Done {
  /** The block's text is source.slice(start, end). */
  start: number;
  end: number;
  /** Until the block is first drawn. */
  token: Token | null;
  width: number;
  lines: string[] | null;
  /** A part of a list drawn in pieces; null: a block of its own. */
  cont: ListCont | null;
  /** A tight list's part: the next part follows with no blank line. */
  joinsNext: boolean;
}

export interface MarkdownStreamStats {
  /** Lexer runs and the characters they read. */
  lexCalls: number;
  lexedChars: number;
}

export class MarkdownStream {
  private done: Done[] = [];
  private open = '';
  private openTokens: Token[] | null = [];
  private pendingCr = false;
  private finished = false;
  private source = '';
  private openLines: { width: number; lines: string[] } | null = null;
  /** A finished stream's lines (the blocks keep none of their own). */
  private finalLines: { width: number; lines: string[] } | null = null;
  private gen = highlightGeneration();
  /** Code was drawn plain that can be highlighted once its grammar is ready. */
  private plainCode = false;
  /**
   * The rows of a long table at the start of the open text, lexed: `raw` is the text they take
   * (from the table's header on), `head` its header and delimiter lines.
   */
  private table: { raw: string; head: string; rows: Tokens.TableCell[][] } | null = null;
  /** A list drawn in pieces: its parts are done[from…]; the open text goes on with its items, drawn as `cont`. */
  private list: { from: number; cont: ListCont } | null = null;
  readonly stats: MarkdownStreamStats = { lexCalls: 0, lexedChars: 0 };
  private readonly ctxDone;
  private readonly ctxOpen;

  constructor(opts: MarkdownOptions = {}, text = '') {
    this.ctxDone = makeContext(opts, false);
    this.ctxOpen = makeContext(opts, true);
    if (text) this.append(text);
  }

  /** Everything appended so far. */
  get text(): string {
    return this.source + (this.pendingCr ? '\r' : '');
  }

  /** Blocks that will not change any more. */
  get finishedBlocks(): number {
    return this.done.length;
  }

  append(delta: string): void {
    if (!delta) return;
    let d = (this.pendingCr ? '\r' : '') + delta;
    this.pendingCr = d.endsWith('\r');
    if (this.pendingCr) d = d.slice(0, -1);
    d = d.replace(/\r\n?/g, '\n');
    this.source += d;
    this.open += d;
    this.openTokens = null;
    this.openLines = null;
  }

  /** The text is complete: every block is final. */
  finish(): void {
    if (this.pendingCr) {
      this.pendingCr = false;
      this.source += '\n';
      this.open += '\n';
      this.openTokens = null;
    }
    this.finished = true;
    this.openLines = null;
    this.finalLines = null;
    // Lexed once more as finished: the last block is final too (a closing code block is highlighted).
    this.openTokens = null;
    this.settle();
  }

  /** Lex the open text and move the blocks that became final out of it. */
  private settle(): void {
    if (this.openTokens) return;
    let all = this.lexOpen();
    if (this.list && !this.goesOn(all, this.list.cont)) {
      this.openList();
      all = this.lexOpen();
    }
    this.moveFinal(all);
    if (!this.finished) this.splitList();
  }

  /** Move the blocks that became final out of the open text (lexed as `all`). */
  private moveFinal(all: Token[]): void {
    let tokens = all;
    let { k, consumed } = this.finalPrefix(all, false);
    // Two blocks after it make a block final too, read from the complete lines alone: a line still
    // coming in can make marked read the lines before it another way for a moment (`2. two\n- `
    // is a list until its `a` comes). Lexed again only when that settles more.
    if (!this.finished && this.finalPrefix(all, true).k > k) {
      const lines = this.open.slice(0, this.open.lastIndexOf('\n') + 1);
      const complete = lines.length === this.open.length ? all : this.lex(lines);
      const more = this.finalPrefix(complete, true);
      if (more.k > k) ({ tokens, k, consumed } = { tokens: complete, ...more });
    }
    // Only move blocks whose text is exactly what was lexed (so nothing is dropped or doubled).
    const taken = tokens.slice(0, k);
    const raw = taken.map((t) => t.raw).join('');
    if (k === 0 || raw.length !== consumed || !this.open.startsWith(raw)) {
      this.openTokens = all;
      return;
    }
    let at = this.source.length - this.open.length;
    for (const t of taken) {
      if (t.type !== 'space') {
        // The first is the rest of a list drawn in pieces, if there is one.
        const cont = this.list?.cont ?? null;
        this.list = null;
        this.done.push({ start: at, end: at + t.raw.length, token: t, width: -1, lines: null, cont, joinsNext: false });
      }
      at += t.raw.length;
    }
    this.open = this.open.slice(raw.length);
    this.openTokens = tokens === all ? all.slice(k) : this.lex(this.open);
  }

  /** Whether `tokens` (the open text) go on with the list drawn in pieces as `cont` says it is drawn. */
  private goesOn(tokens: readonly Token[], cont: ListCont): boolean {
    const l = tokens[0] as Tokens.List | undefined;
    if (l?.type !== 'list' || l.ordered !== (cont.start !== '') || (l.loose && !cont.loose)) return false;
    return listMarkerWidth({ ...l, start: cont.start }) <= cont.markerWidth;
  }

  /** The list's parts back into the open text, to be lexed as one list again. */
  private openList(): void {
    const from = this.list!.from;
    this.open = this.source.slice(this.done[from]!.start);
    this.done.length = from;
    this.list = null;
  }

  /** A long list at the start of the open text: all but its last items become a part drawn once. */
  private splitList(): void {
    const tokens = this.openTokens!;
    const l = tokens[0] as Tokens.List | undefined;
    if (l?.type !== 'list' || findLastContent(tokens) !== 0 || l.items.length < LIST_SPLIT_AT) return;
    const items = l.items.slice(0, l.items.length - LIST_KEEP);
    const raw = items.map((i) => i.raw).join('');
    if (!this.open.startsWith(raw)) return;
    const cont = this.list?.cont ?? { start: l.start, loose: l.loose, markerWidth: listMarkerWidth(l) };
    const at = this.source.length - this.open.length;
    const part: Tokens.List = { ...l, raw, items };
    this.done.push({ start: at, end: at + raw.length, token: part, width: -1, lines: null, cont, joinsNext: !cont.loose });
    const next = { ...cont, start: cont.start === '' ? cont.start : cont.start + items.length };
    this.list = { from: this.list?.from ?? this.done.length - 1, cont: next };
    this.open = this.open.slice(raw.length);
    this.openTokens = [{ ...l, raw: l.raw.slice(raw.length), items: l.items.slice(items.length) }, ...tokens.slice(1)];
  }

  /**
   * The open text lexed. A table's rows are each one line, read on their own (a line is a row
   * unless it is blank or starts another block), so the rows of a long table at its start are
   * lexed once: what follows them is lexed after the table's header, and joined to them. A table
   * of thousands of rows is otherwise lexed whole at every frame until it ends.
   */
  private lexOpen(): Token[] {
    const t = this.table;
    if (t && this.open.startsWith(t.raw)) {
      const rest = this.lex(t.head + this.open.slice(t.raw.length));
      const first = rest[0];
      if (first?.type === 'table' && first.raw.startsWith(t.head)) {
        const table: Tokens.Table = {
          ...(first as Tokens.Table),
          raw: t.raw + first.raw.slice(t.head.length),
          rows: t.rows.concat((first as Tokens.Table).rows),
        };
        return this.keepTableRows([table, ...rest.slice(1)]);
      }
    }
    return this.keepTableRows(this.lex(this.open));
  }

  /** Keep the rows of a long table at the start of `tokens` (all but its last ones) lexed. */
  private keepTableRows(tokens: Token[]): Token[] {
    const before = this.table;
    this.table = null;
    const table = tokens[0] as Tokens.Table | undefined;
    if (this.finished || table?.type !== 'table' || table.rows.length < TABLE_KEEP_AT) return tokens;
    const kept = table.rows.length - TABLE_KEEP;
    // The header, the delimiter and one line a row, each ended by a line feed: the end of the
    // kept rows is after kept + 2 of them, counted on from those kept before.
    const known = before && table.raw.startsWith(before.raw) && before.rows.length <= kept;
    let at = known ? before.raw.length : 0;
    let head = known ? before.head : '';
    for (let n = known ? before.rows.length + 2 : 0; n < kept + 2; n++) {
      const nl = table.raw.indexOf('\n', at);
      if (nl < 0) return tokens;
      at = nl + 1;
      if (n === 1) head = table.raw.slice(0, at);
    }
    const raw = table.raw.slice(0, at);
    if (this.open.startsWith(raw)) this.table = { raw, head, rows: table.rows.slice(0, kept) };
    return tokens;
  }

  private lex(text: string): Token[] {
    this.stats.lexCalls++;
    this.stats.lexedChars += text.length;
    return lexMarkdown(text);
  }

  /**
   * How many of the tokens are final, and the characters they span. A block is final once
   * something follows it and it cannot be continued: after a blank line (lists, tables and
   * paragraphs go on until one), right away for headings, rules and closed fences, and once two
   * blocks follow it (text still coming can turn the last block into more of the one before it,
   * `***` becoming `***x`, but not reach past that one, whose lines are complete), when
   * `byFollowing`. Everything of a finished stream is final.
   */
  private finalPrefix(tokens: readonly Token[], byFollowing: boolean): { k: number; consumed: number } {
    let k = 0;
    let consumed = 0;
    const lastContent = findLastContent(tokens);
    const beforeLast = byFollowing ? findLastContent(tokens, lastContent) : -1;
    const lastWhole = this.lastWholeContent(tokens);
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      const space = t.type === 'space';
      // After a blank line, only a block that starts on a complete line ends one: the `2` of
      // `1. a\n\n2` is a paragraph until its `. b` comes and the list goes on.
      const closed = i < beforeLast || (i < lastContent && selfClosed(t)) || (i < lastWhole && tokens[i + 1]?.type === 'space');
      if (!space && !this.finished && !closed) break;
      consumed += t.raw.length;
      if (!space || i < lastContent || this.finished) k = i + 1;
    }
    return { k, consumed };
  }

  /** The last token of the open text that is not blank lines and starts on a complete line (any, finished). */
  private lastWholeContent(tokens: readonly Token[]): number {
    const end = this.finished ? Number.POSITIVE_INFINITY : this.open.lastIndexOf('\n') + 1;
    let at = 0;
    let last = -1;
    for (let i = 0; i < tokens.length && at < end; i++) {
      if (tokens[i]!.type !== 'space') last = i;
      at += tokens[i]!.raw.length;
    }
    return last;
  }

  /** Whether some code was drawn plain only because the highlighter is not ready for it yet. */
  get drawsCodePlain(): boolean {
    return this.plainCode;
  }

  /** Lines for `width`: the finished blocks from their cache, the open block rendered now. */
  render(width: number): string[] {
    this.settle();
    if (this.gen !== highlightGeneration()) {
      this.gen = highlightGeneration();
      if (this.plainCode) this.invalidate();
    }
    if (this.finished && this.finalLines?.width === width) return this.finalLines.lines;
    const plainBefore = plainCodeDraws();
    const out: string[] = [];
    let joined = false;
    for (const d of this.done) {
      appendBlock(out, this.linesOf(d, width), joined);
      joined = d.joinsNext;
    }
    if (!this.openLines || this.openLines.width !== width) {
      const tokens = this.list ? continued(this.openTokens!, this.list.cont) : this.openTokens!;
      this.openLines = { width, lines: renderBlocks(tokens, width, this.ctxOpen) };
    }
    appendBlock(out, this.openLines.lines, joined);
    if (plainCodeDraws() !== plainBefore) this.plainCode = true;
    if (this.finished) {
      this.finalLines = { width, lines: out };
      for (const d of this.done) d.lines = null;
      this.openLines = null;
    }
    return out;
  }

  /** A finished block's lines at `width` (lexed again when its token was let go). */
  private linesOf(d: Done, width: number): string[] {
    if (d.lines && d.width === width) return d.lines;
    let tokens: Token[];
    if (d.token) tokens = [d.token];
    else {
      const raw = this.source.slice(d.start, d.end);
      this.stats.lexCalls++;
      this.stats.lexedChars += raw.length;
      tokens = lexMarkdown(raw);
    }
    d.lines = renderBlocks(d.cont ? continued(tokens, d.cont) : tokens, width, this.ctxDone);
    d.width = width;
    d.token = null;
    return d.lines;
  }

  /** Draw finished blocks again (the highlighter became available, the theme changed). */
  invalidate(): void {
    this.plainCode = false;
    for (const d of this.done) d.lines = null;
    this.openLines = null;
    this.finalLines = null;
  }
}

/** A block that nothing after it can continue: followed by a blank line, or a heading, a rule, a closed fence. */
/** A block that nothing after it can continue once a line follows it: a heading, a rule, a closed fence. */
function selfClosed(t: Token): boolean {
  if (t.type === 'heading' || t.type === 'hr') return true;
  return t.type === 'code' && (t as { codeBlockStyle?: string }).codeBlockStyle !== 'indented';
}

/**
 * `tokens` with the first, a part of a list, drawn as in the whole list: its numbers, its widest
 * marker, and loose when the whole list is (as marked makes the items of a loose list paragraphs).
 */
function continued(tokens: readonly Token[], c: ListCont): Token[] {
  const l = tokens[0] as Tokens.List | undefined;
  if (l?.type !== 'list') return [...tokens];
  const part: ListPart = { ...l, start: c.start, markerWidth: c.markerWidth };
  if (c.loose && !l.loose) {
    part.loose = true;
    part.items = l.items.map((it) => ({
      ...it,
      loose: true,
      tokens: it.tokens.map((t) => (t.type === 'text' ? ({ ...t, type: 'paragraph' } as Token) : t)),
    }));
  }
  return [part, ...tokens.slice(1)];
}

/** Lines of a block after those before it, a blank line between unless `joined` (a tight list's parts). */
function appendBlock(out: string[], lines: readonly string[], joined = false): void {
  if (!lines.length) return;
  if (out.length && !joined) out.push('');
  for (const l of lines) out.push(l);
}

/** The last token before `end` that is not blank lines; -1 when none. */
function findLastContent(tokens: readonly Token[], end = tokens.length): number {
  for (let i = end - 1; i >= 0; i--) if (tokens[i]!.type !== 'space') return i;
  return -1;
}
