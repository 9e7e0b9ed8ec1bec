// Styled text as spans (text + style), converted from and to strings with SGR / OSC 8 sequences.
// Every other escape sequence is dropped on the way in, so spans only ever hold drawable text.

import { hyperlinkUrl, scanEscape } from './escapes.js';
import { applySgr, DEFAULT_STYLE, type Style, withLink } from './style.js';

export interface Span {
  text: string;
  style: Style;
}

/** Spans of a string with SGR and OSC 8 sequences, starting in `start` style. */
export function parseAnsi(s: string, start: Style = DEFAULT_STYLE): Span[] {
  if (s.indexOf('\x1b') < 0) return s ? [{ text: s, style: start }] : [];
  const out: Span[] = [];
  let st = start;
  let i = 0;
  let text = '';
  const flush = () => {
    if (text) {
      const last = out[out.length - 1];
      if (last && last.style === st) last.text += text;
      else out.push({ text, style: st });
      text = '';
    }
  };
  while (i < s.length) {
    const e = s.indexOf('\x1b', i);
    if (e < 0) {
      text += s.slice(i);
      break;
    }
    text += s.slice(i, e);
    const sc = scanEscape(s, e);
    if (sc.kind === 'sgr') {
      flush();
      st = applySgr(st, s.slice(e + 2, sc.end - 1));
    } else if (sc.kind === 'osc') {
      const url = hyperlinkUrl(s, e, sc.end);
      if (url !== null) {
        flush();
        st = withLink(st, url);
      }
    }
    i = sc.end;
  }
  flush();
  return out;
}

/** The style in force at the end of `s` (for carrying styles across lines). */
export function endStyle(s: string, start: Style = DEFAULT_STYLE): Style {
  const spans = parseAnsi(s, start);
  return spans.length ? spans[spans.length - 1]!.style : start;
}

/** What to write to go from style `a` to style `b`. */
export function transition(a: Style, b: Style): string {
  if (a === b) return '';
  let out = '';
  if (a.link !== b.link) out += b.link ? `\x1b]8;;${b.link}\x1b\\` : '\x1b]8;;\x1b\\';
  if (a.sgr !== b.sgr) out += b.sgr ? (a.sgr ? `\x1b[0;${b.sgr}m` : `\x1b[${b.sgr}m`) : '\x1b[0m';
  return out;
}

/** The same for bytes going to the terminal: the shortest reset (`CSI m`), as the renderer writes them. */
export function wireTransition(a: Style, b: Style): string {
  if (a === b) return '';
  if (b.sgr || a.sgr === b.sgr) return transition(a, b);
  return (a.link !== b.link ? (b.link ? `\x1b]8;;${b.link}\x1b\\` : '\x1b]8;;\x1b\\') : '') + '\x1b[m';
}

/** Spans as a self-contained string: styles opened where they start, everything closed at the end. */
export function spansToString(spans: readonly Span[]): string {
  let out = '';
  let cur = DEFAULT_STYLE;
  for (const sp of spans) {
    if (!sp.text) continue;
    out += transition(cur, sp.style) + sp.text;
    cur = sp.style;
  }
  return out + transition(cur, DEFAULT_STYLE);
}

/** Plain text of spans. */
export function spansText(spans: readonly Span[]): string {
  let t = '';
  for (const s of spans) t += s.text;
  return t;
}
