// Transcript blocks of the clm screen that are not about tools: the banner, the user's echo
// (`you> …`), notices (`[…]`), errors, finish notes, a reply (the `clm>` label and streamed
// markdown), reasoning. Each renders lines for a width and caches them; the screen calls
// transcript.changed(block) when one changes. A blank line before a block separates it from the
// one above, as the original spaces its transcript.

import {
  type Block,
  isUnicodeLocale,
  MarkdownBlock,
  paint,
  sanitize,
  type Style,
  supportsHyperlinks,
  visibleWidth,
  wrapText,
} from '../../tui/index.js';
import { headLines } from './head-lines.js';
import { THEME } from './theme.js';

export { headLines };

/** The settings blocks read when they render (changing one re-renders every block). */
export interface ViewSettings {
  showReasoning: boolean;
  expandOutput: boolean;
}

/** The echo of a prompt shows at most this many lines; the rest is counted (the session has it all). */
export const ECHO_MAX_LINES = 40;

/** Text in one style, wrapped to the width, with a blank line above unless `tight`. */
export class ParagraphBlock implements Block {
  final = true;
  private cache: { width: number; lines: string[] } | null = null;

  constructor(
    private readonly text: string,
    private readonly st: Style,
    private readonly o: { tight?: boolean; prefix?: string; restPrefix?: string; hang?: boolean } = {},
  ) {}

  render(width: number): string[] {
    if (this.cache?.width === width) return this.cache.lines;
    const lines = this.o.tight ? [] : [''];
    if (this.o.hang) for (const row of this.text.split('\n')) lines.push(...wrapHanging(row, width, this.st));
    else
      for (const l of wrapText(paint(this.text, this.st), width, { prefix: this.o.prefix, restPrefix: this.o.restPrefix })) lines.push(l);
    this.cache = { width, lines };
    return lines;
  }
}

/** The last cell of an indented row of columns (cells two or more blanks apart) starts here. */
const LAST_CELL = /^ +\S(?:.*?\S)? {2,}(?=\S)(?!.*\S {2,}\S)/;

/**
 * A row of the program's text wrapped so that what does not fit goes on under where it started:
 * a table row under its last cell (`/tools`' decisions, `/mcp`'s states), an indented line under
 * its indent; a row whose last cell starts too far right for that goes on four columns in.
 */
function wrapHanging(row: string, width: number, st: Style): string[] {
  if (visibleWidth(row) <= width) return [paint(row, st)];
  const lead = row.length - row.trimStart().length;
  const cell = LAST_CELL.exec(row);
  const at = cell ? visibleWidth(cell[0]) : lead;
  const indent = at <= width * 0.6 && width - at >= 20 ? at : Math.min(lead + 4, Math.floor(width / 2));
  return wrapText(paint(row, st), width, { restPrefix: ' '.repeat(indent) });
}

/** ... and at most this many characters. */
export const ECHO_MAX_CHARS = 8000;

/** The echo's prefix, made once (every turn's echo would otherwise keep its own copy). */
const ECHO_PREFIX = paint('you> ', THEME.user);
const ECHO_OPTIONS = { prefix: ECHO_PREFIX, restPrefix: '     ' };

/** `you> <text>` in the user's colour; continuation lines indented under the text. */
export function userEcho(text: string): Block {
  const { lines, more } = headLines(sanitize(text), ECHO_MAX_LINES);
  let shown = lines.join('\n');
  let cut = 0;
  if (shown.length > ECHO_MAX_CHARS) {
    cut = shown.length - ECHO_MAX_CHARS;
    shown = shown.slice(0, ECHO_MAX_CHARS);
  }
  if (cut) shown += ` (+${cut} more characters)`;
  if (more) shown += `\n(+${more} more line${more === 1 ? '' : 's'})`;
  return new ParagraphBlock(shown, THEME.user, ECHO_OPTIONS);
}

/** A bracketed notice (`[cancelled]`, `[switched to model: x]`): the text is given with its brackets. */
export function noticeBlock(text: string, st: Style = THEME.notice): Block {
  return new ParagraphBlock(sanitize(text), st, { hang: true });
}

export function errorBlock(text: string): Block {
  return new ParagraphBlock(sanitize(text), THEME.error, { hang: true });
}

export interface MarkdownSettings {
  unicode: boolean;
  hyperlinks: boolean;
}

export function markdownSettings(env: NodeJS.ProcessEnv = process.env): MarkdownSettings {
  return { unicode: isUnicodeLocale(env), hyperlinks: supportsHyperlinks(env) };
}

const REPLY_HEAD: readonly string[] = Object.freeze(['', paint('clm>', THEME.label)]);
const REPLY_GAP: readonly string[] = Object.freeze(['']);

/** A reply of the model: `clm>` above the first text of a turn, then the markdown as it streams. */
export class ReplyBlock implements Block {
  final = false;
  readonly md: MarkdownBlock;
  private readonly head: readonly string[];
  private cache: { width: number; body: string[]; lines: string[] } | null = null;

  constructor(md: MarkdownSettings, label: boolean) {
    this.md = new MarkdownBlock({ unicode: md.unicode, hyperlinks: md.hyperlinks });
    this.head = label ? REPLY_HEAD : REPLY_GAP;
  }

  get text(): string {
    return this.md.stream.text;
  }

  append(delta: string): void {
    if (delta) this.md.append(delta);
  }

  finish(): void {
    this.md.finish();
    this.final = true;
  }

  awaitsHighlighter(): boolean {
    return this.md.awaitsHighlighter();
  }

  render(width: number): string[] {
    const body = this.md.render(width);
    if (this.cache?.width === width && this.cache.body === body) return this.cache.lines;
    const lines = this.head.concat(body);
    this.cache = { width, body, lines };
    return lines;
  }
}

/** The model's reasoning, dim, shown only while `showReasoning` is on. */
export class ReasoningBlock implements Block {
  final = false;
  private done = '';
  private tail = '';
  /**
   * Wrapped lines of the complete lines of `done` up to `upTo`, at `width`: lines that came later
   * are wrapped and added, so that a long reasoning is not wrapped whole again at every line.
   */
  private doneCache: { width: number; lines: string[]; upTo: number } | null = null;

  constructor(private readonly settings: ViewSettings) {}

  get hasText(): boolean {
    return (this.done + this.tail).trim() !== '';
  }

  get text(): string {
    return this.done + this.tail;
  }

  append(delta: string): void {
    const t = this.tail + delta;
    const nl = t.lastIndexOf('\n');
    if (nl < 0) {
      this.tail = t;
      return;
    }
    this.done += t.slice(0, nl + 1);
    this.tail = t.slice(nl + 1);
  }

  finish(): void {
    this.final = true;
  }

  /** The complete lines wrapped at `width`, those that came since the last time added. */
  private wrapDone(width: number): { lines: string[] } {
    if (this.doneCache?.width !== width) this.doneCache = { width, lines: [], upTo: 0 };
    const c = this.doneCache;
    if (c.upTo < this.done.length) {
      // Newlines before the first text show nothing.
      const more = this.done.slice(c.upTo, -1);
      const text = c.lines.length ? more : more.replace(/^\n+/, '');
      if (text || c.lines.length) for (const l of this.wrap(text, width)) c.lines.push(l);
      c.upTo = this.done.length;
    }
    return c;
  }

  private wrap(text: string, width: number): string[] {
    return wrapText(paint(sanitize(text), THEME.reasoning), width);
  }

  render(width: number): string[] {
    if (!this.settings.showReasoning || !this.hasText) return [];
    // The complete lines are wrapped once; only the line still growing is wrapped again.
    const c = this.wrapDone(width);
    const lines = [''].concat(c.lines);
    if (this.tail) for (const l of this.wrap(c.lines.length ? this.tail : this.tail.replace(/^\n+/, ''), width)) lines.push(l);
    return lines;
  }
}
