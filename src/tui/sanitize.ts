// Making arbitrary text (from a model, a tool, a file) safe to draw: no escape sequence or control
// character of its own reaches the terminal, so it cannot move the cursor, change modes, set the
// title, or fake the toolkit's own markers.

import { scanEscape } from './escapes.js';

const SUSPECT = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const CONTROLS = /[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f]/g;

export interface SanitizeOptions {
  /** Keep SGR styles (colours from `ls --color`, say); every other sequence is still removed. */
  keepStyles?: boolean;
}

/**
 * Text that is safe to draw: escape sequences removed (SGR kept if asked), control characters other
 * than newline and tab removed, CRLF made LF, a lone CR overwriting its line as a terminal would
 * (progress bars keep their last state), lone surrogates replaced by U+FFFD.
 */
export function sanitize(text: string, opts: SanitizeOptions = {}): string {
  if (!SUSPECT.test(text)) return text;
  let s = text.replace(LONE_SURROGATE, '\ufffd').replace(/[\u2028\u2029]/g, '\n');
  if (s.includes('\x1b')) {
    let out = '';
    let i = 0;
    while (i < s.length) {
      const e = s.indexOf('\x1b', i);
      if (e < 0) {
        out += s.slice(i);
        break;
      }
      out += s.slice(i, e);
      const sc = scanEscape(s, e);
      if (opts.keepStyles && sc.kind === 'sgr') out += s.slice(e, sc.end);
      i = sc.end;
    }
    s = out;
  }
  if (s.includes('\r')) s = s.replace(/\r+\n/g, '\n').split('\n').map(overstrike).join('\n');
  return s.replace(CONTROLS, '');
}

/** A line with carriage returns as a terminal shows it: each segment overwrites from column 0. */
function overstrike(line: string): string {
  if (!line.includes('\r')) return line;
  const parts = line.split('\r');
  let acc = '';
  for (const p of parts) acc = p.length >= acc.length ? p : p + acc.slice(p.length);
  return acc;
}

/** Whether a URL may be offered as a clickable link: a web, mail or file URL with nothing odd in it. */
export function safeLinkUrl(url: string): boolean {
  return url.length <= 2048 && /^(https?:\/\/|mailto:|file:\/\/)[^\s\x00-\x1f\x7f-\x9f]*$/i.test(url);
}
