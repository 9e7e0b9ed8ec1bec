// Escape sequences: the ones the toolkit writes, and a scanner that finds where any sequence in a
// string ends (so text can be measured, cut and cleaned without breaking or leaking sequences).

export const ESC = '\x1b';
export const CSI = '\x1b[';
export const OSC = '\x1b]';
export const ST = '\x1b\\';

/** Zero-width marker a component puts where the hardware cursor belongs (for IME); the renderer removes it. */
export const CURSOR_MARKER = '\x1b_clm:cursor\x1b\\';

export const SYNC_BEGIN = '\x1b[?2026h';
export const SYNC_END = '\x1b[?2026l';
export const ALT_SCREEN_ON = '\x1b[?1049h';
export const ALT_SCREEN_OFF = '\x1b[?1049l';
export const PASTE_ON = '\x1b[?2004h';
export const PASTE_OFF = '\x1b[?2004l';
/** Button events (the wheel is buttons 4 and 5) in SGR encoding. */
export const MOUSE_ON = '\x1b[?1000h\x1b[?1006h';
export const MOUSE_OFF = '\x1b[?1006l\x1b[?1000l';
export const CURSOR_SHOW = '\x1b[?25h';
export const CURSOR_HIDE = '\x1b[?25l';
export const SGR_RESET = '\x1b[0m';
export const ERASE_LINE_RIGHT = '\x1b[K';
export const ERASE_DOWN = '\x1b[J';
export const RESET_MARGINS = '\x1b[r';
/** xterm modifyOtherKeys level 2: Shift/Alt+Enter and friends arrive as distinct sequences. */
export const MODIFY_OTHER_KEYS_ON = '\x1b[>4;2m';
export const MODIFY_OTHER_KEYS_OFF = '\x1b[>4;0m';
export const QUERY_CURSOR = '\x1b[6n';
/** Kitty keyboard protocol, "disambiguate" only: Esc and modified keys as CSI-u (push / pop). */
export const KITTY_KEYS_ON = '\x1b[>1u';
export const KITTY_KEYS_OFF = '\x1b[<u';

/** Cursor to 0-based (row, col). */
export const cursorTo = (row: number, col: number): string => (col === 0 ? `\x1b[${row + 1}H` : `\x1b[${row + 1};${col + 1}H`);
export const cursorUp = (n: number): string => (n <= 0 ? '' : n === 1 ? '\x1b[A' : `\x1b[${n}A`);
export const cursorDown = (n: number): string => (n <= 0 ? '' : n === 1 ? '\x1b[B' : `\x1b[${n}B`);
/** Cursor to 0-based column on the current row. */
export const cursorColumn = (col: number): string => (col === 0 ? '\r' : col === 1 ? '\r\x1b[C' : `\x1b[${col + 1}G`);
/** Top and bottom margins, 0-based inclusive rows. */
export const setMargins = (top: number, bottom: number): string => `\x1b[${top + 1};${bottom + 1}r`;
/** Reverse index: a row up; at the top margin the region scrolls down. */
export const REVERSE_INDEX = '\x1bM';
export const insertLines = (n: number): string => (n === 1 ? '\x1b[L' : `\x1b[${n}L`);
export const deleteLines = (n: number): string => (n === 1 ? '\x1b[M' : `\x1b[${n}M`);
export const hyperlinkOpen = (url: string): string => `\x1b]8;;${url}\x1b\\`;
export const HYPERLINK_CLOSE = '\x1b]8;;\x1b\\';

/** What kind of sequence starts at an ESC. */
export type EscapeKind = 'sgr' | 'csi' | 'osc' | 'string' | 'short' | 'cursor';

export interface EscapeScan {
  kind: EscapeKind;
  /** Index just past the sequence. */
  end: number;
}

/**
 * The sequence starting at s[i] (which is ESC). An unterminated sequence runs to the end of the
 * string, so nothing after a stray ESC can be mistaken for text and then printed raw.
 */
export function scanEscape(s: string, i: number): EscapeScan {
  const c = s.charCodeAt(i + 1);
  if (c === 0x5b) return scanCsi(s, i + 2);
  // OSC, DCS, SOS, PM, APC.
  if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) return scanString(s, i);
  const n = s.length;
  if (i + 1 >= n) return { kind: 'short', end: n };
  // ESC, intermediates 0x20–0x2F, then one final byte (e.g. ESC ( B, ESC 7, ESC c).
  let j = i + 1;
  while (j < n && s.charCodeAt(j) >= 0x20 && s.charCodeAt(j) <= 0x2f) j++;
  return { kind: 'short', end: Math.min(n, j + 1) };
}

/** A CSI whose parameters start at s[j]: parameter bytes 0x30–0x3F, intermediates 0x20–0x2F, a final byte. */
function scanCsi(s: string, j: number): EscapeScan {
  const n = s.length;
  let plain = true; // digits, ';' and ':' only: a candidate SGR
  for (; j < n; j++) {
    const d = s.charCodeAt(j);
    if (d < 0x30 || d > 0x3f) break;
    if (d > 0x3b) plain = false;
  }
  for (; j < n; j++) {
    const d = s.charCodeAt(j);
    if (d < 0x20 || d > 0x2f) break;
    plain = false;
  }
  if (j >= n) return { kind: 'csi', end: n };
  // A byte that cannot be part of a CSI (outside 0x40–0x7E) ends it, and is swallowed with it.
  return { kind: plain && s.charCodeAt(j) === 0x6d ? 'sgr' : 'csi', end: j + 1 };
}

/** OSC, DCS, SOS, PM or APC at s[i]: up to ST (ESC \) or, for OSC, BEL. */
function scanString(s: string, i: number): EscapeScan {
  const n = s.length;
  const c = s.charCodeAt(i + 1);
  const kind: EscapeKind = c === 0x5d ? 'osc' : 'string';
  for (let j = i + 2; j < n; j++) {
    const d = s.charCodeAt(j);
    if (d === 0x07 && kind === 'osc') return { kind, end: j + 1 };
    if (d !== 0x1b) continue;
    // ESC without '\' ends the string here; the ESC starts a new sequence.
    if (s.charCodeAt(j + 1) !== 0x5c) return { kind, end: j };
    if (c === 0x5f && j + 2 - i === CURSOR_MARKER.length && s.startsWith(CURSOR_MARKER, i)) return { kind: 'cursor', end: j + 2 };
    return { kind, end: j + 2 };
  }
  return { kind, end: n };
}

/** The URL of an OSC 8 sequence s.slice(start, end), '' when it closes a link, null when not OSC 8. */
export function hyperlinkUrl(s: string, start: number, end: number): string | null {
  if (!s.startsWith('\x1b]8;', start)) return null;
  const body = s.slice(start + 4, s.charCodeAt(end - 1) === 0x07 ? end - 1 : end - 2);
  const semi = body.indexOf(';');
  return semi < 0 ? '' : body.slice(semi + 1);
}

/** The text without any escape sequence (styles, links, the cursor marker, everything). */
export function stripEscapes(s: string): string {
  if (s.indexOf('\x1b') < 0) return s;
  let out = '';
  let i = 0;
  while (i < s.length) {
    const e = s.indexOf('\x1b', i);
    if (e < 0) {
      out += s.slice(i);
      break;
    }
    out += s.slice(i, e);
    i = scanEscape(s, e).end;
  }
  return out;
}
