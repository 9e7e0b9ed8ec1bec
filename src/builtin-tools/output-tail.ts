// The live view of a running command: the last few KiB of what it printed, reported at most
// every PROGRESS_INTERVAL_MS, so a chatty command costs a few events a second and a bounded
// buffer whatever it writes. What the model gets is the capped output (output-cap.ts), not this.

import { monotonicMs } from '../host/monotonic.js';

/** Bytes of the output's end kept for the live view. */
export const TAIL_BYTES = 4096;
/** Least time between two reports of one command. */
export const PROGRESS_INTERVAL_MS = 100;

const decoder = new TextDecoder('utf-8');

export class OutputTail {
  private buf = Buffer.alloc(0);
  private total = 0;
  private lastReport = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  private pending = false;
  private stopped = false;

  constructor(
    private readonly report: (text: string) => void,
    private readonly now: () => number = monotonicMs,
  ) {}

  push(chunk: Buffer): void {
    if (this.stopped || chunk.length === 0) return;
    this.total += chunk.length;
    const c = chunk.length > TAIL_BYTES ? chunk.subarray(chunk.length - TAIL_BYTES) : chunk;
    const keep = Math.min(this.buf.length, TAIL_BYTES - c.length);
    this.buf = Buffer.concat([this.buf.subarray(this.buf.length - keep), c]);
    this.pending = true;
    if (this.timer) return;
    const wait = this.lastReport + PROGRESS_INTERVAL_MS - this.now();
    if (wait <= 0) this.flush();
    else {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush();
      }, wait);
      this.timer.unref();
    }
  }

  /** No more reports (the command ended, or was stopped). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The kept end as text, from a line start: a line cut at its front could show the end of a secret the masking no longer recognises. */
  text(): string {
    let b = this.buf;
    if (this.total > b.length) {
      const nl = b.indexOf(0x0a);
      b = b.subarray(nl < 0 ? b.length : nl + 1);
    }
    return decoder.decode(b);
  }

  private flush(): void {
    if (this.stopped || !this.pending) return;
    this.pending = false;
    this.lastReport = this.now();
    this.report(this.text());
  }
}
