// The start of a file cut at a byte count, as text: a character the cut split is left out whole.

/** `b` without a last UTF-8 sequence that the cut left incomplete. */
export function wholeChars(b: Buffer): Buffer {
  let i = b.length - 1;
  while (i >= 0 && b.length - 1 - i < 3 && (b[i]! & 0xc0) === 0x80) i--;
  if (i < 0) return b;
  const lead = b[i]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return b.length - i < need ? b.subarray(0, i) : b;
}
