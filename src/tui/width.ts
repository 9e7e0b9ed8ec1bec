// Display width: how many terminal cells text takes. Graphemes come from Intl.Segmenter, widths
// from the East Asian Width property, emoji sequences count two; printable ASCII takes a fast
// path that never touches the segmenter (its first use costs milliseconds on Node 20).

import { eastAsianWidth } from 'get-east-asian-width';
import { stripEscapes } from './escapes.js';

let segmenter: Intl.Segmenter | null = null;
const seg = (): Intl.Segmenter => (segmenter ??= new Intl.Segmenter());

const ASCII_PRINTABLE = /^[\x20-\x7e]*$/;

export function isPrintableAscii(s: string): boolean {
  return ASCII_PRINTABLE.test(s);
}

export interface GraphemeSegment {
  segment: string;
  /** Offset of the cluster in the string. */
  index: number;
}

// Intl.Segmenter takes time quadratic in the length of the string it is given (V8 on Node 20):
// long strings are segmented in chunks, each ending before its last cluster (which may continue
// into the next chunk), so the cost stays linear.
const CHUNK = 256;

/** The grapheme clusters of s.slice(start, end) with their offsets in `s`. */
export function* segmentGraphemes(s: string, start = 0, end = s.length): Generator<GraphemeSegment> {
  let pos = start;
  while (pos < end) {
    const stop = Math.min(end, pos + CHUNK);
    const piece = s.slice(pos, stop);
    let last: GraphemeSegment | null = null;
    for (const g of seg().segment(piece)) {
      if (last) yield last;
      last = { segment: g.segment, index: pos + g.index };
    }
    if (!last) return;
    if (stop >= end || last.index === pos) {
      // The end of the text, or one cluster longer than a chunk: take it as it is.
      yield last;
      pos = last.index + last.segment.length;
    } else pos = last.index;
  }
}

/** The grapheme clusters of `s`. */
export function graphemes(s: string): string[] {
  if (ASCII_PRINTABLE.test(s)) return s.split('');
  const out: string[] = [];
  if (s.length <= CHUNK) for (const g of seg().segment(s)) out.push(g.segment);
  else for (const g of segmentGraphemes(s)) out.push(g.segment);
  return out;
}

const VISIBLE = /[^\p{Default_Ignorable_Code_Point}\p{Control}\p{Format}\p{Nonspacing_Mark}\p{Enclosing_Mark}\p{Surrogate}]/u;
const SPACING_MARK = /\p{Spacing_Mark}/u;
const EMOJI_PRESENTATION = /^\p{Emoji_Presentation}/u;
const EMOJI = /^\p{Emoji}/u;
const EMOJI_MODIFIER = /\p{Emoji_Modifier}/u;
const EXT_PICT = /\p{Extended_Pictographic}/gu;
const KEYCAP = /^[\d#*]\uFE0F?\u20E3$/;
const REGIONAL_PAIR = /^[\u{1F1E6}-\u{1F1FF}]{2}$/u;
const TAG_SEQUENCE = /^\u{1F3F4}[\u{E0020}-\u{E007E}]+\u{E007F}$/u;

const widthCache = new Map<string, number>();

/** Width of one grapheme cluster: 0, 1 or 2 (a few rare clusters more). */
export function graphemeWidth(g: string): number {
  const c0 = g.charCodeAt(0);
  if (g.length === 1 && c0 >= 0x20 && c0 < 0x7f) return 1;
  const hit = widthCache.get(g);
  if (hit !== undefined) return hit;
  const w = computeWidth(g);
  if (widthCache.size > 20_000) widthCache.clear();
  widthCache.set(g, w);
  return w;
}

function computeWidth(g: string): number {
  const vis = g.search(VISIBLE);
  if (vis < 0) return 0;
  if (isEmojiCluster(g)) return 2;
  const base = g.slice(vis);
  const cps: number[] = [];
  for (const ch of base) if (VISIBLE.test(ch)) cps.push(ch.codePointAt(0)!);
  const hangul = hangulWidth(cps);
  if (hangul !== undefined) return hangul;
  let w = eastAsianWidth(cps[0]!);
  let first = true;
  for (const ch of base) {
    if (first) {
      first = false;
      continue;
    }
    if (SPACING_MARK.test(ch) || (ch >= '\uFF00' && ch <= '\uFFEF')) w += eastAsianWidth(ch.codePointAt(0)!);
  }
  return w;
}

function isEmojiCluster(g: string): boolean {
  if (g.length > 50) return false;
  const cp = g.codePointAt(0)!;
  // A lone regional indicator is a letter-like symbol, not a flag.
  if (g.length === (cp > 0xffff ? 2 : 1)) return EMOJI_PRESENTATION.test(g) && !(cp >= 0x1f1e6 && cp <= 0x1f1ff);
  if (KEYCAP.test(g) || REGIONAL_PAIR.test(g) || TAG_SEQUENCE.test(g) || joinsPictographs(g)) return true;
  if (!EMOJI.test(g) || (cp >= 0x30 && cp <= 0x39) || cp === 0x23 || cp === 0x2a) return false;
  // An emoji with VS16 (emoji presentation), a skin tone, or a ZWJ tail is drawn as one wide glyph.
  return g.includes('\uFE0F') || EMOJI_MODIFIER.test(g) || (g.includes('\u200D') && EMOJI_PRESENTATION.test(g));
}

/** Two or more pictographs joined by ZWJ (👨‍👩‍👧). */
const joinsPictographs = (g: string): boolean => g.includes('\u200D') && (g.match(EXT_PICT)?.length ?? 0) >= 2;

const isL = (c: number) => (c >= 0x1100 && c <= 0x115f) || (c >= 0xa960 && c <= 0xa97c);
const isV = (c: number) => (c >= 0x1160 && c <= 0x11a7) || (c >= 0xd7b0 && c <= 0xd7c6);
const isT = (c: number) => (c >= 0x11a8 && c <= 0x11ff) || (c >= 0xd7cb && c <= 0xd7fb);

/** Conjoining Hangul jamo: an L+V(+T) run draws as one syllable of width 2. */
function hangulWidth(cps: number[]): number | undefined {
  if (cps.length === 0) return undefined;
  let w = 0;
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i]!;
    if (!(isL(c) || isV(c) || isT(c))) return w === 0 ? undefined : w + widthFrom(cps, i);
    const n = syllableAt(cps, i);
    if (n > 0) {
      w += 2;
      i += n - 1;
    } else w += eastAsianWidth(c);
  }
  return w;
}

/** Code points in the L+V(+T) syllable at cps[i]: 2 or 3; 0 when none starts there. */
function syllableAt(cps: number[], i: number): number {
  const v = cps[i + 1];
  if (!isL(cps[i]!) || v === undefined || !isV(v)) return 0;
  const t = cps[i + 2];
  return t !== undefined && isT(t) ? 3 : 2;
}

function widthFrom(cps: number[], i: number): number {
  let w = 0;
  for (let k = i; k < cps.length; k++) w += eastAsianWidth(cps[k]!);
  return w;
}

/** Width of plain text (no escape sequences; control characters count 0). */
export function textWidth(s: string): number {
  if (ASCII_PRINTABLE.test(s)) return s.length;
  let w = 0;
  if (s.length <= CHUNK) for (const g of seg().segment(s)) w += graphemeWidth(g.segment);
  else for (const g of segmentGraphemes(s)) w += graphemeWidth(g.segment);
  return w;
}

/** Width of text that may carry escape sequences (styles, links), which take no cells. */
export function visibleWidth(s: string): number {
  return textWidth(s.indexOf('\x1b') < 0 ? s : stripEscapes(s));
}
