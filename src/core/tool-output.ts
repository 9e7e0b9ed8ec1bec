// Tool output post-processing: binary detection and the output cap, measured in UTF-8 bytes.

import { utf8, utf8Encoder as enc } from './utf8.js';

/** Keeps a leading BOM, so its text lines up with the bytes; each ill-formed sequence becomes one U+FFFD, where it starts. */
const utf8AsIs = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The bytes as text (a leading BOM kept), and the byte offset of the first NUL or ill-formed
 * UTF-8 sequence in them (-1: none). The decoder marks every ill-formed sequence with a U+FFFD;
 * one whose bytes are EF BF BD is a U+FFFD the text itself holds.
 */
function decodeChecked(b: Uint8Array): { text: string; binaryAt: number } {
  const text = utf8AsIs.decode(b);
  let from = 0;
  let at = 0; // the byte offset of text[from]
  for (const m of text.matchAll(/[\0\ufffd]/g)) {
    at += enc.encode(text.slice(from, m.index)).length;
    from = m.index;
    if (m[0] === '\0' || b[at] !== 0xef || b[at + 1] !== 0xbf || b[at + 2] !== 0xbd) return { text, binaryAt: at };
  }
  return { text, binaryAt: -1 };
}

/** Byte offset of the first NUL or invalid UTF-8 sequence, or -1 if the bytes are clean text. */
export function firstBinaryOffset(b: Uint8Array): number {
  return decodeChecked(b).binaryAt;
}

export function binaryNotice(offset: number, total: number): string {
  return `[tool output contained binary data at byte offset ${offset} of ${total}; not displayed]`;
}

export const TRUNCATED_MARKER = '\n[output truncated]';

/** Normalise a tool's output to text: bytes are checked for binary data; strings for NUL and lone surrogates. */
export function outputText(out: string | Uint8Array): string {
  if (typeof out !== 'string') {
    const { text, binaryAt } = decodeChecked(out);
    // A BOM is not part of the text.
    return binaryAt < 0 ? text.replace(/^\ufeff/, '') : binaryNotice(binaryAt, out.length);
  }
  // Fast path: nearly all outputs are clean strings.
  if (!/[\0\ud800-\udfff]/.test(out)) return out;
  const bad = out.search(/\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  // Lone surrogates count as the U+FFFD they become in UTF-8.
  return bad < 0 ? out : binaryNotice(enc.encode(out.slice(0, bad)).length, enc.encode(out).length);
}

/** Keep at most `cap` UTF-8 bytes, ending with the visible marker when anything was cut; never splits a character. */
export function clampOutput(s: string, cap: number): string {
  // Cheap bound: a string of n UTF-16 units has at most 3n UTF-8 bytes.
  if (s.length * 3 <= cap) return s;
  const bytes = enc.encode(s);
  if (bytes.length <= cap) return s;
  let keep = Math.max(0, cap - TRUNCATED_MARKER.length);
  while (keep > 0 && (bytes[keep]! & 0xc0) === 0x80) keep--;
  return utf8.decode(bytes.subarray(0, keep)) + TRUNCATED_MARKER;
}
