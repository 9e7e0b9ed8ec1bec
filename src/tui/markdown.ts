// Markdown to styled lines for a width: marked's lexer for the structure, our own layout for the
// terminal. Bold, italic, code, strike, links (OSC 8 where the terminal has it, else the URL in
// parentheses when it differs from the text), headings, nested lists, code blocks (highlighted
// once highlight.js is loaded), block quotes, rules, and tables fitted to the width with
// word-wrapped cells, alignment, and box drawing (ASCII when the terminal is not UTF-8).

import { Lexer, lexer, type Token, type Tokens } from 'marked';
import { canHighlight, highlightCode, highlightStreamingCode, prepareHighlighter, streamedLines } from './highlight.js';
import { safeLinkUrl, sanitize } from './sanitize.js';
import { type Span, spansText } from './spans.js';
import { DEFAULT_STYLE, mergeStyles, paint, type Style, style, type StyleSpec, withLink } from './style.js';
import { padEnd, wrapSpans, wrapSpansKept } from './wrap.js';
import { textWidth, visibleWidth } from './width.js';

export interface MarkdownTheme {
  strong: Style;
  em: Style;
  codespan: Style;
  del: Style;
  link: Style;
  /** The URL shown after a link's text when links are not clickable. */
  linkUrl: Style;
  heading: Style;
  /** Code blocks drawn without highlighting. */
  code: Style;
  /** Base of highlighted code. */
  codeHighlighted: Style;
  blockquote: Style;
  listMarker: Style;
  rule: Style;
  tableBorder: Style;
  tableHeader: Style;
  html: Style;
}

export const DEFAULT_THEME: MarkdownTheme = {
  strong: style({ bold: true }),
  em: style({ italic: true }),
  codespan: style({ fg: 'green' }),
  del: style({ strike: true }),
  link: style({ underline: true, fg: 'blue' }),
  linkUrl: style({ dim: true }),
  heading: style({ bold: true }),
  code: style({ fg: 'green', dim: true }),
  codeHighlighted: DEFAULT_STYLE,
  blockquote: style({ italic: true }),
  listMarker: DEFAULT_STYLE,
  rule: style({ dim: true }),
  tableBorder: style({ dim: true }),
  tableHeader: style({ bold: true }),
  html: style({ dim: true }),
};

export interface MarkdownOptions {
  /** Box drawing and bullets in Unicode (default true); ASCII otherwise. */
  unicode?: boolean;
  /** Clickable links with OSC 8 (default false). */
  hyperlinks?: boolean;
  /** Highlight fenced code (default true; loads highlight.js on the first such block). */
  highlight?: boolean;
  theme?: Partial<Record<keyof MarkdownTheme, Style | StyleSpec>>;
}

export interface MarkdownContext {
  unicode: boolean;
  hyperlinks: boolean;
  highlight: boolean;
  theme: MarkdownTheme;
  /** A block is still streaming: draw it without the expensive parts. */
  open: boolean;
}

/** Contexts without a theme of their own are shared (every streamed reply would otherwise keep two). */
const sharedContexts = new Map<string, MarkdownContext>();

export function makeContext(opts: MarkdownOptions = {}, open = false): MarkdownContext {
  if (opts.theme) return { ...switches(opts), theme: themeOf(opts.theme), open };
  const key = `${opts.unicode ?? true}|${opts.hyperlinks ?? false}|${opts.highlight ?? true}|${open}`;
  let ctx = sharedContexts.get(key);
  if (!ctx) {
    ctx = Object.freeze({ ...switches(opts), theme: Object.freeze({ ...DEFAULT_THEME }), open });
    sharedContexts.set(key, ctx);
  }
  return ctx;
}

const switches = (opts: MarkdownOptions) => ({
  unicode: opts.unicode ?? true,
  hyperlinks: opts.hyperlinks ?? false,
  highlight: opts.highlight ?? true,
});

function themeOf(over: NonNullable<MarkdownOptions['theme']>): MarkdownTheme {
  const theme = { ...DEFAULT_THEME };
  for (const [k, v] of Object.entries(over)) {
    if (v) theme[k as keyof MarkdownTheme] = 'key' in v ? (v as Style) : style(v as StyleSpec);
  }
  return theme;
}

/** Lex markdown (GFM) into top-level tokens. */
export function lexMarkdown(src: string): Token[] {
  try {
    return lexer(src, { gfm: true });
  } catch {
    return [{ type: 'paragraph', raw: src, text: src, tokens: [{ type: 'text', raw: src, text: src }] } as Token];
  }
}

/** A whole markdown document as lines. */
export function renderMarkdown(src: string, width: number, opts: MarkdownOptions = {}): string[] {
  return renderBlocks(lexMarkdown(src), width, makeContext(opts));
}

/** Top-level tokens as lines, one blank line between blocks. */
export function renderBlocks(tokens: readonly Token[], width: number, ctx: MarkdownContext): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    const ls = renderBlock(t, width, ctx);
    if (!ls.length) continue;
    if (out.length) out.push('');
    for (const l of ls) out.push(l);
  }
  return out;
}

const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', '#39': "'" };

/** Text from the model: entities decoded, control characters and escapes removed. */
function clean(s: string): string {
  const decoded = s.includes('&') ? s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]+[0-9]*);/gi, decodeEntity) : s;
  return sanitize(decoded);
}

/** The character of entity `&e;` (`m`), or `m` itself when it names none that may be shown. */
function decodeEntity(m: string, e: string): string {
  const lower = e.toLowerCase();
  if (ENTITY[lower]) return ENTITY[lower]!;
  if (!lower.startsWith('#')) return m;
  const cp = lower.startsWith('#x') ? parseInt(lower.slice(2), 16) : parseInt(lower.slice(1), 10);
  const shown = cp > 0x1f && cp <= 0x10ffff && !(cp >= 0x7f && cp < 0xa0) && !(cp >= 0xd800 && cp <= 0xdfff);
  return shown ? String.fromCodePoint(cp) : m;
}

// ---- inline ------------------------------------------------------------------------------------

function inline(tokens: readonly Token[] | undefined, st: Style, ctx: MarkdownContext, out: Span[] = []): Span[] {
  for (const t of tokens ?? []) inlineToken(t, st, ctx, out);
  return out;
}

function inlineToken(t: Token, st: Style, ctx: MarkdownContext, out: Span[]): void {
  switch (t.type) {
    case 'text': {
      const tt = t as Tokens.Text;
      if (tt.tokens?.length) inline(tt.tokens, st, ctx, out);
      else out.push({ text: clean(tt.text), style: st });
      return;
    }
    case 'escape':
      out.push({ text: clean((t as Tokens.Escape).text), style: st });
      return;
    case 'strong':
      inline((t as Tokens.Strong).tokens, mergeStyles(st, ctx.theme.strong), ctx, out);
      return;
    case 'em':
      inline((t as Tokens.Em).tokens, mergeStyles(st, ctx.theme.em), ctx, out);
      return;
    case 'del':
      inline((t as Tokens.Del).tokens, mergeStyles(st, ctx.theme.del), ctx, out);
      return;
    case 'codespan':
      out.push({ text: clean((t as Tokens.Codespan).text), style: mergeStyles(st, ctx.theme.codespan) });
      return;
    case 'br':
      out.push({ text: '\n', style: st });
      return;
    case 'link':
    case 'image':
      inlineLink(t as Tokens.Link | Tokens.Image, st, ctx, out);
      return;
    case 'html': {
      const h = (t as Tokens.HTML).text;
      out.push({ text: /^<br\s*\/?>$/i.test(h.trim()) ? '\n' : clean(h), style: st });
      return;
    }
    case 'checkbox':
      return;
    default: {
      const g = t as Tokens.Generic;
      if (g.tokens) inline(g.tokens, st, ctx, out);
      else out.push({ text: clean(typeof g.text === 'string' ? g.text : g.raw), style: st });
    }
  }
}

/** A link (or an image, as its description): clickable where it may be, else its URL after it when the text does not say it. */
function inlineLink(l: Tokens.Link | Tokens.Image, st: Style, ctx: MarkdownContext, out: Span[]): void {
  const href = clean(l.href ?? '');
  const linkStyle = mergeStyles(st, ctx.theme.link);
  const start = out.length;
  if (l.type === 'image') out.push({ text: `[image: ${clean(l.text) || 'untitled'}]`, style: linkStyle });
  else inline(l.tokens, linkStyle, ctx, out);
  if (ctx.hyperlinks && safeLinkUrl(href)) {
    for (let i = start; i < out.length; i++) out[i] = { text: out[i]!.text, style: withLink(out[i]!.style, href) };
    return;
  }
  if (!saysUrl(spansText(out.slice(start)).trim(), href)) out.push({ text: ` (${href})`, style: mergeStyles(st, ctx.theme.linkUrl) });
}

/** The link's text already says its URL (or it has none). */
function saysUrl(shown: string, href: string): boolean {
  const bare = href.replace(/^mailto:/i, '');
  return !href || shown === href || shown === bare || `http://${shown}` === href || `https://${shown}` === href;
}

// ---- blocks ------------------------------------------------------------------------------------

function renderBlock(t: Token, width: number, ctx: MarkdownContext): string[] {
  width = Math.max(1, width);
  switch (t.type) {
    case 'space':
    case 'def':
      return [];
    case 'paragraph':
    case 'text': {
      const p = t as Tokens.Paragraph;
      return wrapSpansKept(inline(p.tokens ?? [{ type: 'text', raw: p.text, text: p.text } as Token], DEFAULT_STYLE, ctx), width);
    }
    case 'heading': {
      const h = t as Tokens.Heading;
      return wrapSpans(inline(h.tokens, ctx.theme.heading, ctx), width);
    }
    case 'hr':
      return [wrapSpans([{ text: (ctx.unicode ? '─' : '-').repeat(width), style: ctx.theme.rule }], width)[0]!];
    case 'code':
      return renderCode(t as Tokens.Code, width, ctx);
    case 'blockquote': {
      const bq = t as Tokens.Blockquote;
      const bar = ctx.unicode ? '│ ' : '> ';
      const inner = renderBlocks(bq.tokens, width - 2, { ...ctx, theme: { ...ctx.theme } });
      const prefix = paint(bar, ctx.theme.rule);
      return inner.map((l) => prefix + (l ? styleOver(l, ctx.theme.blockquote) : ''));
    }
    case 'list':
      return renderList(t as Tokens.List, width, ctx, 0);
    case 'table':
      return renderTable(t as Tokens.Table, width, ctx);
    case 'html': {
      const h = t as Tokens.HTML;
      return wrapSpans([{ text: clean(h.text).replace(/\n+$/, ''), style: ctx.theme.html }], width, { hard: true });
    }
    default: {
      const g = t as Tokens.Generic;
      return wrapSpans([{ text: clean(g.raw ?? '').replace(/\n+$/, ''), style: DEFAULT_STYLE }], width);
    }
  }
}

/** A rendered line with extra attributes (italic for quotes) on every styled run. */
function styleOver(line: string, over: Style): string {
  if (over === DEFAULT_STYLE) return line;
  const open = over.sgr ? `\x1b[${over.sgr}m` : '';
  return open + line.replace(/\x1b\[0(;[0-9;]*)?m/g, (m) => `${m}${open}`) + '\x1b[0m';
}

function renderCode(c: Tokens.Code, width: number, ctx: MarkdownContext): string[] {
  const text = sanitize(c.text.replace(/\n$/, ''));
  const lang = (c.lang ?? '').trim().split(/\s+/)[0]!.toLowerCase();
  const fenced = c.codeBlockStyle !== 'indented';
  // Very long blocks stay plain (highlight.ts says how long).
  let coloured: Span[][] = [];
  if (ctx.highlight && fenced && lang && canHighlight(lang)) {
    const base = ctx.theme.codeHighlighted;
    // A block still streaming: its complete lines as far as their colours are known. One just
    // closed whose own are not back yet (long code): the colours it had while it streamed.
    // (marked drops the newline that ends the code; the raw text shows whether its last line is complete.)
    const lines = ctx.open
      ? highlightStreamingCode(c.raw.endsWith('\n') ? `${text}\n` : text, lang, base)
      : (highlightCode(text, lang, base) ?? streamedLines(text, lang, base));
    if (lines) coloured = lines;
    if (ctx.open) prepareHighlighter(lang);
  }
  const wrap = (spans: Span[]) => wrapSpans(spans, width, { hard: true });
  const plain = text.split('\n').slice(coloured.length);
  return [...wrappedCode(coloured, width), ...plain.flatMap((l) => wrap([{ text: l, style: ctx.theme.code }]))];
}

/**
 * Lines of highlighted code wrapped, each kept by its spans: a block still streaming is drawn every
 * frame, and its colours' lines are the same objects from one answer to the next (highlight.ts).
 */
const wrapped = new WeakMap<Span[], { width: number; rows: string[] }>();

function wrappedCode(code: Span[][], width: number): string[] {
  const out: string[] = [];
  for (const spans of code) {
    let known = wrapped.get(spans);
    if (known?.width !== width) {
      known = { width, rows: wrapSpans(spans, width, { hard: true }) };
      wrapped.set(spans, known);
    }
    for (const r of known.rows) out.push(r);
  }
  return out;
}

/**
 * A part of a list drawn on its own (a streamed list's items, some at a time): its markers as
 * wide as `markerWidth`, the widest of the whole list's.
 */
export interface ListPart extends Tokens.List {
  markerWidth?: number;
}

/** The width of a top-level list's widest marker (`  10. `). */
export function listMarkerWidth(list: Tokens.List): number {
  return Math.max(0, ...listMarkers(list, 0).map((m) => textWidth(m)));
}

function renderList(list: ListPart, width: number, ctx: MarkdownContext, depth: number): string[] {
  const out: string[] = [];
  const markers = listMarkers(list, depth);
  const mw = Math.max(list.markerWidth ?? 0, ...markers.map((m) => textWidth(m)));
  const avail = Math.max(1, width - mw);
  const pad = ' '.repeat(mw);
  list.items.forEach((item, i) => {
    if (i > 0 && list.loose) out.push('');
    const markerStr = wrapSpans([{ text: markers[i]!, style: ctx.theme.listMarker }], width)[0]!;
    itemBody(item, list.loose, avail, ctx, depth).forEach((l, k) => out.push((k === 0 ? padEnd(markerStr, mw) : pad) + l));
  });
  return out;
}

/** `  - `, `  1. `, `  - [x] `: each item's marker (nested lists add no lead of their own). */
function listMarkers(list: Tokens.List, depth: number): string[] {
  const lead = depth === 0 ? '  ' : '';
  let n = typeof list.start === 'number' ? list.start : 1;
  return list.items.map((item) => {
    const m = list.ordered ? `${n++}.` : '-';
    const task = item.task ? (item.checked ? ' [x]' : ' [ ]') : '';
    return `${lead}${m}${task} `;
  });
}

const isListOrText = (t: Token) => t.type === 'list' || t.type === 'text';

/** The blocks of a list item, at `avail` columns. */
function itemBody(item: Tokens.ListItem, loose: boolean, avail: number, ctx: MarkdownContext, depth: number): string[] {
  const body: string[] = [];
  let prevWasText = false;
  for (const t of item.tokens) {
    const ls = itemBlock(t, avail, ctx, depth);
    if (!ls.length) continue;
    // Blocks inside an item are separated by blank lines only in a loose list.
    if (body.length && (loose || (prevWasText && !isListOrText(t)))) body.push('');
    prevWasText = t.type === 'text' || t.type === 'paragraph';
    for (const l of ls) body.push(l);
  }
  return body.length ? body : [''];
}

function itemBlock(t: Token, avail: number, ctx: MarkdownContext, depth: number): string[] {
  if (t.type === 'checkbox') return [];
  return t.type === 'list' ? renderList(t as Tokens.List, avail, ctx, depth + 1) : renderBlock(t, avail, ctx);
}

// ---- tables ------------------------------------------------------------------------------------

interface Glyphs {
  h: string;
  v: string;
  tl: string;
  tm: string;
  tr: string;
  ml: string;
  mm: string;
  mr: string;
  bl: string;
  bm: string;
  br: string;
}
const UNICODE_BOX: Glyphs = { h: '─', v: '│', tl: '┌', tm: '┬', tr: '┐', ml: '├', mm: '┼', mr: '┤', bl: '└', bm: '┴', br: '┘' };
const ASCII_BOX: Glyphs = { h: '-', v: '|', tl: '+', tm: '+', tr: '+', ml: '+', mm: '+', mr: '+', bl: '+', bm: '+', br: '+' };

/**
 * Column widths for `avail` columns of cell text: natural widths when they fit; else each column
 * keeps at least its longest word (cells wrap at spaces) and the room left is shared in proportion
 * to what each column still lacks, the last cells to the one lacking most. When the longest words
 * do not all fit, the widest column gives way, and goes on giving way (down to 3) before another
 * does: words are split only in columns that cannot be as wide as their longest word.
 * null when not even 3 per column fits.
 */
export function fitColumns(natural: number[], avail: number, longestWord: number[] = []): number[] | null {
  const cols = natural.length;
  const nat = natural.map((w) => Math.max(1, w));
  const sum = nat.reduce((a, b) => a + b, 0);
  if (sum <= avail) return nat;
  if (cols * 3 > avail) return null;
  const w = nat.map((x, i) => Math.min(x, Math.max(3, longestWord[i] ?? 0)));
  let used = w.reduce((a, b) => a + b, 0);
  while (used > avail) {
    const k = columnToNarrow(w, nat, longestWord);
    w[k]!--;
    used--;
  }
  const room = avail - used;
  const lack = nat.map((x, i) => x - w[i]!);
  const totalLack = lack.reduce((a, b) => a + b, 0);
  for (let i = 0; i < cols; i++) w[i]! += Math.floor((lack[i]! * room) / totalLack);
  used = w.reduce((a, b) => a + b, 0);
  while (used < avail) {
    let k = -1;
    for (let i = 0; i < cols; i++) if (w[i]! < nat[i]! && (k < 0 || nat[i]! - w[i]! > nat[k]! - w[k]!)) k = i;
    if (k < 0) break;
    w[k]!++;
    used++;
  }
  return w;
}

/**
 * The column to take a cell from: one that already splits its longest word (the widest of them),
 * before one that still keeps it whole (the widest, the one with more text on a tie). Never one
 * of 3 or less.
 */
function columnToNarrow(w: number[], nat: number[], longest: number[]): number {
  const splitting = widestWhere(w, nat, (i) => w[i]! > 3 && w[i]! < (longest[i] ?? 0));
  if (splitting >= 0) return splitting;
  const any = widestWhere(w, nat, (i) => w[i]! > 3);
  return any >= 0 ? any : w.indexOf(Math.max(...w));
}

/** The widest column i for which ok(i) (the one with more text on a tie); -1 when none. */
function widestWhere(w: number[], nat: number[], ok: (i: number) => boolean): number {
  let k = -1;
  for (let i = 0; i < w.length; i++) if (ok(i) && (k < 0 || w[i]! > w[k]! || (w[i] === w[k] && nat[i]! > nat[k]!))) k = i;
  return k;
}

function renderTable(t: Tokens.Table, width: number, ctx: MarkdownContext): string[] {
  const g = ctx.unicode ? UNICODE_BOX : ASCII_BOX;
  const cols = t.header.length;
  const keep = t.rows.length >= MANY_ROWS;
  const head = tableRowOf(t.header, ctx.theme.tableHeader, ctx, keep);
  const body = t.rows.map((r) => tableRowOf(r, DEFAULT_STYLE, ctx, keep));
  const { natural, longest } = measureColumns([head, ...body], cols);
  const widths = fitColumns(natural, width - (3 * cols + 1), longest);
  if (!widths)
    return renderStacked(
      t,
      head.cells,
      body.map((r) => r.cells),
      width,
      ctx,
    );
  const border = (s: string) => wrapSpans([{ text: s, style: ctx.theme.tableBorder }], Infinity)[0]!;
  const rule = (l: string, m: string, r: string) => border(l + widths.map((w) => g.h.repeat(w + 2)).join(m) + r);
  const v = border(g.v);
  const headAlign = t.header.map((h, i) => h.align ?? t.align[i] ?? null);
  const out = [rule(g.tl, g.tm, g.tr), ...tableRow(head, widths, headAlign, v), rule(g.ml, g.mm, g.mr)];
  for (const r of body) out.push(...tableRow(r, widths, t.align, v));
  out.push(rule(g.bl, g.bm, g.br));
  return out;
}

/**
 * A table row's cells as spans, their measures, and its lines at the last column layout drawn.
 * A streamed table is drawn whole at every frame until it ends, so the rows of a long one are
 * kept, by their text, for the next frame (thousands of rows would otherwise be wrapped again
 * each time).
 */
interface TableRow {
  cells: Span[][];
  /** Each cell's widest line and longest word. */
  natural: number[];
  longest: number[];
  drawn: { layout: string; lines: string[] } | null;
}

/** Rows of long tables kept per context (its theme and switches make the spans); emptied when full. */
const keptRows = new WeakMap<MarkdownContext, Map<string, TableRow>>();
const ROWS_KEPT = 10_000;
/** A table of fewer rows is drawn afresh each time (it is quick, and keeps nothing). */
const MANY_ROWS = 64;

function tableRowOf(cells: readonly Tokens.TableCell[], st: Style, ctx: MarkdownContext, keep: boolean): TableRow {
  if (!keep) return measuredRow(cells.map((c) => inline(c.tokens, st, ctx)));
  // A row is one line of the source: a line feed cannot be in a cell's text.
  const key = `${st.key}\n${cells.map((c) => c.text).join('\n')}`;
  let kept = keptRows.get(ctx);
  if (!kept) keptRows.set(ctx, (kept = new Map()));
  let row = kept.get(key);
  if (!row) {
    row = measuredRow(cells.map((c) => inline(c.tokens, st, ctx)));
    if (kept.size >= ROWS_KEPT) kept.clear();
    kept.set(key, row);
  }
  return row;
}

/** A row of these cells, each measured: its widest line and its longest word. */
function measuredRow(cells: Span[][]): TableRow {
  const row: TableRow = { cells, natural: [], longest: [], drawn: null };
  for (const cell of cells) {
    let natural = 1;
    let longest = 0;
    for (const line of spansText(cell).split('\n')) {
      natural = Math.max(natural, textWidth(line));
      for (const word of line.split(/\s+/)) longest = Math.max(longest, textWidth(word));
    }
    row.natural.push(natural);
    row.longest.push(longest);
  }
  return row;
}

/** Each column's natural width (its widest line) and its longest word. */
function measureColumns(rows: readonly TableRow[], cols: number): { natural: number[]; longest: number[] } {
  const natural = new Array<number>(cols).fill(1);
  const longest = new Array<number>(cols).fill(0);
  for (const row of rows) {
    for (let i = 0; i < cols && i < row.natural.length; i++) {
      natural[i] = Math.max(natural[i]!, row.natural[i]!);
      longest[i] = Math.max(longest[i]!, row.longest[i]!);
    }
  }
  return { natural, longest };
}

type Align = 'left' | 'right' | 'center' | null | undefined;

/** One table row: its cells wrapped to their columns, side by side, aligned, between bars `v`. */
function tableRow(row: TableRow, widths: readonly number[], align: readonly Align[], v: string): string[] {
  const layout = `${widths.join(',')}|${align.join(',')}|${v}`;
  if (row.drawn?.layout === layout) return row.drawn.lines;
  const wrapped = row.cells.map((cell, i) => wrapSpans(cell, widths[i]!));
  const h = Math.max(1, ...wrapped.map((w) => w.length));
  const out: string[] = [];
  for (let k = 0; k < h; k++) {
    let line = v;
    for (let i = 0; i < widths.length; i++) line += ` ${aligned(wrapped[i]?.[k] ?? '', widths[i]!, align[i])} ${v}`;
    out.push(line);
  }
  row.drawn = { layout, lines: out };
  return out;
}

function aligned(text: string, width: number, align: Align): string {
  const pad = width - visibleWidth(text);
  const left = align === 'right' ? pad : align === 'center' ? Math.floor(pad / 2) : 0;
  return `${' '.repeat(left)}${text}${' '.repeat(pad - left)}`;
}

/** A table too wide for any column layout: each row as `header: value` lines. */
function renderStacked(t: Tokens.Table, head: Span[][], body: Span[][][], width: number, ctx: MarkdownContext): string[] {
  const out: string[] = [];
  body.forEach((row, r) => {
    if (r > 0) out.push('');
    row.forEach((cell, i) => {
      const label = spansText(head[i] ?? []).trim() || `column ${i + 1}`;
      out.push(...wrapSpans([{ text: `${label}: `, style: ctx.theme.tableHeader }, ...cell], width, { restPrefix: '  ' }));
    });
  });
  if (!body.length)
    out.push(
      ...wrapSpans(
        head.flatMap((c, i) => (i ? [{ text: ' | ', style: ctx.theme.tableBorder }, ...c] : c)),
        width,
      ),
    );
  void t;
  return out;
}

/** What the warm-up lexes: one construct a step, the whole set at the end. */
const WARM_UP_TEXTS = [
  'a',
  '# a',
  '**b** *c* `d` [e](https://f)',
  '日本 👍🏽',
  '- g',
  '| h | i |\n|---|--:|\n| 1 | 2 |',
  '> j',
  '```\nk\n```',
  '# a\n\n**b** *c* `d` [e](https://f) 日本 👍🏽\n\n- g\n\n| h | i |\n|---|--:|\n| 1 | 2 |\n\n> j\n\n```\nk\n```',
];

/**
 * The first-use costs of rendering markdown, as steps of a few milliseconds each: ~45 ms in all
 * on Node 20, mostly V8 compiling marked's regular expressions on their first match (once for
 * one-byte text, once for two-byte), then Intl.Segmenter's data and the render path. Run them
 * right after the first frame, each in its own task, and a key typed meanwhile waits for one
 * step, not for all of them; the first reply finds the work done.
 */
export function markdownWarmUpSteps(): (() => void)[] {
  const steps: (() => void)[] = [];
  const rules = (Lexer as { rules?: { block?: Record<string, unknown>; inline?: Record<string, unknown> } }).rules;
  for (const set of [rules?.block?.gfm, rules?.inline?.gfm]) {
    for (const re of Object.values(set ?? {})) {
      if (!(re instanceof RegExp)) continue;
      steps.push(() => {
        re.test('a **b** _c_ `d` [e](f) <g> ~h~');
        re.test('日本 **b** 👍🏽');
        re.lastIndex = 0;
      });
    }
  }
  for (const text of WARM_UP_TEXTS) steps.push(() => renderMarkdown(text, 40));
  return steps;
}
