// Tool output post-processing: binary detection and the output cap, measured in UTF-8 bytes.

const enc = new TextEncoder();

/** Byte offset of the first NUL or invalid UTF-8 sequence, or -1 if the bytes are clean text. */
export function firstBinaryOffset(b: Uint8Array): number {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i]!;
    if (c === 0) return i;
    if (c < 0x80) {
      i++;
      continue;
    }
    let len: number, min: number;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      min = 0x10000;
    } else return i;
    if (i + len > n) return i;
    let cp = c & (0xff >> (len + 1));
    for (let k = 1; k < len; k++) {
      const cc = b[i + k]!;
      if ((cc & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return -1;
}

export function binaryNotice(offset: number, total: number): string {
  return `[tool output contained binary data at byte offset ${offset} of ${total}; not displayed]`;
}

export const TRUNCATED_MARKER = '\n[output truncated]';

/** Normalise a tool's output to text: bytes are checked for binary data; strings for NUL and lone surrogates. */
export function outputText(out: string | Uint8Array): string {
  if (typeof out === 'string') {
    // Fast path: nearly all outputs are clean strings.
    if (!/[\0\ud800-\udfff]/.test(out)) return out;
    const bytes = enc.encode(out);
    const nul = out.indexOf('\0');
    // Lone surrogates were already replaced by U+FFFD in `bytes`; report the NUL or the first replacement.
    let off = nul >= 0 ? enc.encode(out.slice(0, nul)).length : -1;
    const lone = out.search(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    if (lone >= 0) {
      const lo = enc.encode(out.slice(0, lone)).length;
      off = off < 0 ? lo : Math.min(off, lo);
    }
    return off < 0 ? out : binaryNotice(off, bytes.length);
  }
  const off = firstBinaryOffset(out);
  if (off >= 0) return binaryNotice(off, out.length);
  return new TextDecoder().decode(out);
}

/** Keep at most `cap` UTF-8 bytes, ending with the visible marker when anything was cut; never splits a character. */
export function clampOutput(s: string, cap: number): string {
  // Cheap bound: a string of n UTF-16 units has at most 3n UTF-8 bytes.
  if (s.length * 3 <= cap) return s;
  const bytes = enc.encode(s);
  if (bytes.length <= cap) return s;
  let keep = Math.max(0, cap - TRUNCATED_MARKER.length);
  while (keep > 0 && (bytes[keep]! & 0xc0) === 0x80) keep--;
  return new TextDecoder().decode(bytes.subarray(0, keep)) + TRUNCATED_MARKER;
}
