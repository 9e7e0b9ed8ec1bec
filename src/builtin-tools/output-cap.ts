// Output capture with a byte cap that is never silent: when output exceeds what fits, the head is
// kept (cut on a UTF-8 character boundary) and a visible marker says how much was dropped. Any
// suffix (the exit status) is kept inside the cap, so the core's own clamp never cuts it away.

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Largest cut ≤ n that does not split a UTF-8 sequence of buf. */
export function utf8Boundary(buf: Uint8Array, n: number): number {
  if (n >= buf.length) return buf.length;
  let i = n;
  // Back up over at most 3 continuation bytes (10xxxxxx) to the start of the character.
  while (i > 0 && n - i < 3 && (buf[i]! & 0xc0) === 0x80) i--;
  return (buf[i]! & 0xc0) === 0x80 ? n : i;
}

export function truncationMarker(dropped: number, total: number): string {
  return `\n[output truncated: ${dropped} of ${total} bytes dropped]`;
}

/** Bytes as text; invalid UTF-8 (binary output) becomes a note instead of mojibake. */
export function bytesToText(buf: Uint8Array): string {
  try {
    return fatalUtf8.decode(buf);
  } catch {
    return `(binary output of ${buf.length} bytes not displayed)`;
  }
}

export interface Fitted {
  /** The head of the output that fits. */
  head: Buffer;
  /** "" when nothing was dropped, else the truncation marker. */
  marker: string;
}

/** Accumulates a stream's bytes, keeping the first `keep` bytes and counting all of them. */
export class CappedOutput {
  private parts: Buffer[] = [];
  private kept = 0;
  /** Bytes received in all (also those not kept). */
  total = 0;

  constructor(private readonly keep: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.kept >= this.keep) return; // full: count and discard, the pipe is still drained
    const take = Math.min(chunk.length, this.keep - this.kept);
    this.parts.push(take === chunk.length ? chunk : chunk.subarray(0, take));
    this.kept += take;
  }

  /** Head + marker so that head + marker + suffixBytes ≤ cap (a cap smaller than the marker is exceeded by it). */
  fit(cap: number, suffixBytes = 0): Fitted {
    const head = Buffer.concat(this.parts);
    if (this.total + suffixBytes <= cap && this.total === head.length) return { head, marker: '' };
    // The marker with the largest possible count is an upper bound for its length.
    const room = cap - suffixBytes - Buffer.byteLength(truncationMarker(this.total, this.total));
    const n = utf8Boundary(head, Math.max(0, Math.min(room, head.length)));
    return { head: head.subarray(0, n), marker: truncationMarker(this.total - n, this.total) };
  }

  /** The capped output as bytes followed by suffix, within cap. */
  renderBytes(cap: number, suffix = ''): Buffer {
    const s = Buffer.from(suffix, 'utf8');
    const { head, marker } = this.fit(cap, s.length);
    return Buffer.concat([head, Buffer.from(marker, 'utf8'), s]);
  }

  /** The capped output as text followed by suffix, within cap. */
  renderText(cap: number, suffix = ''): string {
    const { head, marker } = this.fit(cap, Buffer.byteLength(suffix, 'utf8'));
    return bytesToText(head) + marker + suffix;
  }
}
