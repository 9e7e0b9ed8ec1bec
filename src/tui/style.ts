// Text styles (SGR): one interned object per distinct style, so styles compare with ===, and a
// canonical SGR form, so what the renderer writes never depends on how a component spelled it.

export const BOLD = 1;
export const DIM = 2;
export const ITALIC = 4;
export const UNDERLINE = 8;
export const BLINK = 16;
export const INVERSE = 32;
export const HIDDEN = 64;
export const STRIKE = 128;
export const OVERLINE = 256;

const FLAG_CODES: [number, string][] = [
  [BOLD, '1'],
  [DIM, '2'],
  [ITALIC, '3'],
  [UNDERLINE, '4'],
  [BLINK, '5'],
  [INVERSE, '7'],
  [HIDDEN, '8'],
  [STRIKE, '9'],
  [OVERLINE, '53'],
];

export interface Style {
  readonly flags: number;
  /** Foreground as SGR parameters ('31', '38;5;208', '38;2;1;2;3'), '' for the default. */
  readonly fg: string;
  readonly bg: string;
  /** OSC 8 hyperlink target, '' for none. */
  readonly link: string;
  /** SGR parameters of the whole style, '' for the default. */
  readonly sgr: string;
  readonly key: string;
}

const interned = new Map<string, Style>();

export function makeStyle(flags: number, fg: string, bg: string, link: string): Style {
  const key = `${flags}|${fg}|${bg}|${link}`;
  let s = interned.get(key);
  if (!s) {
    const parts: string[] = [];
    for (const [bit, code] of FLAG_CODES) if (flags & bit) parts.push(code);
    if (fg) parts.push(fg);
    if (bg) parts.push(bg);
    s = Object.freeze({ flags, fg, bg, link, sgr: parts.join(';'), key });
    // Links make the set open-ended; forget them all rather than grow without bound.
    if (interned.size > 50_000) {
      interned.clear();
      interned.set(DEFAULT_STYLE.key, DEFAULT_STYLE);
    }
    interned.set(key, s);
  }
  return s;
}

export const DEFAULT_STYLE: Style = makeStyle(0, '', '', '');

/** The SGR sequence that sets `s` from any state. */
export function sgrOf(s: Style): string {
  return s.sgr ? `\x1b[0;${s.sgr}m` : '\x1b[0m';
}

const applied = new Map<string, Style>();

/** SGR codes that set a flag, and codes that clear flags. */
const SETS = new Map<number, number>([
  [1, BOLD],
  [2, DIM],
  [3, ITALIC],
  [4, UNDERLINE],
  [21, UNDERLINE],
  [5, BLINK],
  [6, BLINK],
  [7, INVERSE],
  [8, HIDDEN],
  [9, STRIKE],
  [53, OVERLINE],
]);
const CLEARS = new Map<number, number>([
  [22, BOLD | DIM],
  [23, ITALIC],
  [24, UNDERLINE],
  [25, BLINK],
  [27, INVERSE],
  [28, HIDDEN],
  [29, STRIKE],
  [55, OVERLINE],
]);

/** A style being changed by an SGR sequence. */
interface Sgr {
  flags: number;
  fg: string;
  bg: string;
}

/** `s` after the SGR sequence with parameters `params` (the text between CSI and 'm'). */
export function applySgr(s: Style, params: string): Style {
  const ck = `${s.key}\u0000${params}`;
  const hit = applied.get(ck);
  if (hit) return hit;
  const st: Sgr = { flags: s.flags, fg: s.fg, bg: s.bg };
  const ps = params === '' ? ['0'] : params.split(';');
  for (let i = 0; i < ps.length; i++) {
    const p = ps[i]!;
    // Colon sub-parameters: 4:3 (curly underline), 38:2::r:g:b.
    if (p.includes(':')) applySubParameters(st, p.split(':'));
    else i += applyCode(st, p === '' ? 0 : Number(p), ps, i);
  }
  const out = makeStyle(st.flags, st.fg, st.bg, s.link);
  if (applied.size > 50_000) applied.clear();
  applied.set(ck, out);
  return out;
}

function applySubParameters(st: Sgr, sub: string[]): void {
  const head = sub[0];
  if (head === '4') {
    st.flags = sub[1] === '0' ? st.flags & ~UNDERLINE : st.flags | UNDERLINE;
    return;
  }
  if (head !== '38' && head !== '48') return;
  const c = extendedColor(sub.slice(1).filter((_x, k) => !(sub[1] === '2' && k === 1 && sub.length > 5)));
  if (!c) return;
  if (head === '38') st.fg = `38;${c}`;
  else st.bg = `48;${c}`;
}

/** The code ps[i] (= n); returns how many of the parameters after it it took. */
function applyCode(st: Sgr, n: number, ps: string[], i: number): number {
  if (n === 0) {
    st.flags = 0;
    st.fg = '';
    st.bg = '';
    return 0;
  }
  const set = SETS.get(n);
  const clear = CLEARS.get(n);
  if (set !== undefined) st.flags |= set;
  else if (clear !== undefined) st.flags &= ~clear;
  else if ((n >= 30 && n <= 37) || (n >= 90 && n <= 97)) st.fg = String(n);
  else if (n === 39) st.fg = '';
  else if ((n >= 40 && n <= 47) || (n >= 100 && n <= 107)) st.bg = String(n);
  else if (n === 49) st.bg = '';
  else if (n === 38 || n === 48 || n === 58) return applyExtendedColor(st, n, ps, i);
  return 0;
}

/** 38/48/58 ; 5 ; n or ; 2 ; r ; g ; b (58, the underline colour, is read past and dropped). */
function applyExtendedColor(st: Sgr, n: number, ps: string[], i: number): number {
  const mode = ps[i + 1];
  const take = mode === '5' ? 2 : mode === '2' ? 4 : 0;
  const c = take ? extendedColor(ps.slice(i + 1, i + 1 + take)) : null;
  if (c && n === 38) st.fg = `38;${c}`;
  else if (c && n === 48) st.bg = `48;${c}`;
  return take;
}

function extendedColor(p: string[]): string | null {
  const byte = (x: string | undefined) => {
    const v = Number(x);
    return Number.isInteger(v) && v >= 0 && v <= 255 ? v : null;
  };
  if (p[0] === '5') {
    const v = byte(p[1]);
    return v === null ? null : `5;${v}`;
  }
  if (p[0] === '2') {
    const r = byte(p[1]),
      g = byte(p[2]),
      b = byte(p[3]);
    return r === null || g === null || b === null ? null : `2;${r};${g};${b}`;
  }
  return null;
}

export function withLink(s: Style, link: string): Style {
  return s.link === link ? s : makeStyle(s.flags, s.fg, s.bg, link);
}

/** `s` without its colours (NO_COLOR); a background becomes inverse video, so what it set apart stays apart. */
export function withoutColor(s: Style): Style {
  if (!s.fg && !s.bg) return s;
  return makeStyle(s.bg ? s.flags | INVERSE : s.flags, '', '', s.link);
}

// ---- building styles -------------------------------------------------------------------------

const NAMES = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'] as const;
export type ColorName = (typeof NAMES)[number] | `bright${Capitalize<(typeof NAMES)[number]>}` | 'gray';
/** A named colour, a palette index 0–255, or '#rrggbb'. */
export type Color = ColorName | number | `#${string}`;

export interface StyleSpec {
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
  inverse?: boolean;
  strike?: boolean;
  fg?: Color;
  bg?: Color;
  link?: string;
}

function colorParams(c: Color, bg: boolean): string {
  if (typeof c === 'number') return `${bg ? 48 : 38};5;${Math.max(0, Math.min(255, Math.trunc(c)))}`;
  if (c.startsWith('#')) {
    const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(c);
    if (!m) throw new Error(`not a colour: ${c}`);
    return `${bg ? 48 : 38};2;${parseInt(m[1]!, 16)};${parseInt(m[2]!, 16)};${parseInt(m[3]!, 16)}`;
  }
  const name = c === 'gray' ? 'brightBlack' : c;
  const bright = name.startsWith('bright');
  const base = bright ? name.slice(6).toLowerCase() : name;
  const idx = NAMES.indexOf(base as (typeof NAMES)[number]);
  if (idx < 0) throw new Error(`not a colour: ${c}`);
  return String((bright ? 90 : 30) + (bg ? 10 : 0) + idx);
}

/** A style from a description, optionally on top of `base`. */
export function style(spec: StyleSpec, base: Style = DEFAULT_STYLE): Style {
  let flags = base.flags;
  const set = (bit: number, v: boolean | undefined) => {
    if (v === true) flags |= bit;
    else if (v === false) flags &= ~bit;
  };
  set(BOLD, spec.bold);
  set(DIM, spec.dim);
  set(ITALIC, spec.italic);
  set(UNDERLINE, spec.underline);
  set(INVERSE, spec.inverse);
  set(STRIKE, spec.strike);
  const fg = spec.fg === undefined ? base.fg : colorParams(spec.fg, false);
  const bg = spec.bg === undefined ? base.bg : colorParams(spec.bg, true);
  return makeStyle(flags, fg, bg, spec.link ?? base.link);
}

/** Styles merged: `over`'s flags added to `under`'s, its colours and link where it has them. */
export function mergeStyles(under: Style, over: Style): Style {
  if (over === DEFAULT_STYLE) return under;
  if (under === DEFAULT_STYLE) return over;
  return makeStyle(under.flags | over.flags, over.fg || under.fg, over.bg || under.bg, over.link || under.link);
}

/**
 * `text` in a style, as a string with SGR (and OSC 8 for a link). Styled text inside keeps its own
 * style and the outer one resumes after it, because every reset inside re-opens the outer style.
 */
export function paint(text: string, s: StyleSpec | Style): string {
  const st = 'key' in s ? (s as Style) : style(s as StyleSpec);
  if (st === DEFAULT_STYLE || text === '') return text;
  const open = (st.sgr ? `\x1b[${st.sgr}m` : '') + (st.link ? `\x1b]8;;${st.link}\x1b\\` : '');
  const close = (st.link ? '\x1b]8;;\x1b\\' : '') + (st.sgr ? '\x1b[0m' : '');
  const inner = st.sgr && text.includes('\x1b[0m') ? text.replaceAll('\x1b[0m', `\x1b[0m\x1b[${st.sgr}m`) : text;
  return open + inner + close;
}
