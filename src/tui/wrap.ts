// Wrapping, truncating and slicing styled text by display columns. Each output line is
// self-contained: it opens the styles in force where it starts and closes them where it ends, so a
// line can be drawn alone (the renderer redraws single lines) and styles survive a wrap.

import { parseAnsi, type Span, spansToString, transition } from './spans.js';
import { DEFAULT_STYLE, type Style } from './style.js';
import { graphemes, graphemeWidth, isPrintableAscii, textWidth, visibleWidth } from './width.js';

export const TAB_WIDTH = 4;

export interface WrapOptions {
  /** Break anywhere and keep every space (code, preformatted output); default: break between words. */
  hard?: boolean;
  /** Put before the first line (counted in the width). */
  prefix?: string | readonly Span[];
  /** Put before every other line; defaults to `prefix`. */
  restPrefix?: string | readonly Span[];
}

interface Piece {
  text: string;
  style: Style;
  width: number;
}

const toSpans = (p: string | readonly Span[] | undefined): readonly Span[] =>
  p === undefined ? [] : typeof p === 'string' ? parseAnsi(p) : p;

/** Lines of at most `width` columns holding styled text (newlines in the text start new lines). */
export function wrapSpans(spans: readonly Span[], width: number, opts: WrapOptions = {}): string[] {
  const first = toSpans(opts.prefix);
  const rest = opts.restPrefix === undefined ? first : toSpans(opts.restPrefix);
  const firstW = first.reduce((a, s) => a + textWidth(s.text), 0);
  const restW = rest.reduce((a, s) => a + textWidth(s.text), 0);
  const out: string[] = [];
  let row: Piece[] = [];
  let rowW = 0;
  let avail = Math.max(1, width - firstW);
  let wrapped = false; // the current row continues a line broken by wrapping

  const endRow = () => {
    if (!opts.hard) {
      while (row.length) {
        const last = row[row.length - 1]!;
        const t = last.text.replace(/[ \t]+$/, '');
        if (t === last.text) break;
        if (t) {
          last.width -= last.text.length - t.length;
          last.text = t;
          break;
        }
        row.pop();
      }
    }
    out.push(serialize(out.length === 0 ? first : rest, row));
    row = [];
    rowW = 0;
    avail = Math.max(1, width - restW);
  };
  const push = (text: string, st: Style, w: number) => {
    const last = row[row.length - 1];
    if (last && last.style === st) {
      last.text += text;
      last.width += w;
    } else row.push({ text, style: st, width: w });
    rowW += w;
  };
  // Graphemes of `text` one by one, breaking rows as they fill.
  const pushBroken = (text: string, st: Style) => {
    for (const g of graphemes(text)) {
      let w = g === '\t' ? TAB_WIDTH - (rowW % TAB_WIDTH) : graphemeWidth(g);
      if (rowW + w > avail && rowW > 0) {
        endRow();
        wrapped = true;
        if (g === '\t') w = TAB_WIDTH;
      }
      push(g === '\t' ? ' '.repeat(w) : g, st, w);
    }
  };

  // Split into logical lines, then into words (runs of non-space that may cross spans) and spaces.
  const lines: Span[][] = [[]];
  for (const sp of spans) {
    const parts = sp.text.split('\n');
    parts.forEach((p, k) => {
      if (k > 0) lines.push([]);
      if (p) lines[lines.length - 1]!.push({ text: p, style: sp.style });
    });
  }
  lines.forEach((line, li) => {
    if (li > 0) {
      endRow();
      wrapped = false;
    }
    if (opts.hard) {
      for (const sp of line) {
        if (isPrintableAscii(sp.text)) {
          let t = sp.text;
          while (t) {
            const room = avail - rowW;
            if (room <= 0) {
              endRow();
              wrapped = true;
              continue;
            }
            push(t.slice(0, room), sp.style, Math.min(room, t.length));
            t = t.slice(room);
          }
        } else pushBroken(sp.text, sp.style);
      }
      return;
    }
    let word: Piece[] = [];
    let wordW = 0;
    const flushWord = () => {
      if (!word.length) return;
      if (rowW + wordW > avail && rowW > 0) {
        endRow();
        wrapped = true;
      }
      if (wordW > avail) for (const p of word) pushBroken(p.text, p.style);
      else for (const p of word) push(p.text, p.style, p.width);
      word = [];
      wordW = 0;
    };
    for (const sp of line) {
      for (const m of sp.text.matchAll(/[ \t]+|[^ \t]+/g)) {
        const t = m[0];
        if (t.charCodeAt(0) === 0x20 || t.charCodeAt(0) === 0x09) {
          flushWord();
          if (rowW === 0 && wrapped) continue;
          let w = 0;
          for (const ch of t) w += ch === '\t' ? TAB_WIDTH - ((rowW + w) % TAB_WIDTH) : 1;
          if (rowW + w > avail) {
            endRow();
            wrapped = true;
            continue;
          }
          push(' '.repeat(w), sp.style, w);
        } else {
          const w = textWidth(t);
          const last = word[word.length - 1];
          if (last && last.style === sp.style) {
            last.text += t;
            last.width += w;
          } else word.push({ text: t, style: sp.style, width: w });
          wordW += w;
        }
      }
    }
    flushWord();
  });
  endRow();
  return out;
}

function serialize(prefix: readonly Span[], row: Piece[]): string {
  let out = '';
  let cur = DEFAULT_STYLE;
  for (const p of prefix) {
    if (p.text) {
      out += transition(cur, p.style) + p.text;
      cur = p.style;
    }
  }
  for (const p of row) {
    out += transition(cur, p.style) + p.text;
    cur = p.style;
  }
  return out + transition(cur, DEFAULT_STYLE);
}

/** `wrapSpans` for a string with SGR / OSC 8 styles. */
export function wrapText(text: string, width: number, opts: WrapOptions = {}): string[] {
  return wrapSpans(parseAnsi(text), width, opts);
}

/** Styled text cut to `width` columns, ending in `ellipsis` when something was cut. */
export function truncate(text: string, width: number, ellipsis = '…'): string {
  if (visibleWidth(text) <= width) return text;
  const ew = textWidth(ellipsis);
  const keep = Math.max(0, width - ew);
  const out: Span[] = [];
  let w = 0;
  outer: for (const sp of parseAnsi(text)) {
    let t = '';
    for (const g of graphemes(sp.text)) {
      const gw = g === '\t' ? 1 : graphemeWidth(g);
      if (w + gw > keep) {
        if (t) out.push({ text: t, style: sp.style });
        break outer;
      }
      t += g === '\t' ? ' ' : g;
      w += gw;
    }
    if (t) out.push({ text: t, style: sp.style });
  }
  if (ew <= width) out.push({ text: ellipsis, style: DEFAULT_STYLE });
  return spansToString(out);
}

/** Columns [from, to) of styled text; a wide character cut in half becomes a space. */
export function sliceColumns(text: string, from: number, to = Infinity): string {
  const out: Span[] = [];
  let col = 0;
  for (const sp of parseAnsi(text)) {
    let t = '';
    for (const g of graphemes(sp.text)) {
      const gw = graphemeWidth(g);
      const end = col + gw;
      if (col >= from && end <= to) t += g;
      else if (gw === 2 && ((col < from && end > from) || (col < to && end > to))) t += ' ';
      col = end;
      if (col >= to) break;
    }
    if (t) out.push({ text: t, style: sp.style });
    if (col >= to) break;
  }
  return spansToString(out);
}

/** Styled text padded with spaces to `width` columns (longer text is left as it is). */
export function padEnd(text: string, width: number): string {
  const w = visibleWidth(text);
  return w >= width ? text : text + ' '.repeat(width - w);
}
