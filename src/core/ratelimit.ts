// Token bucket (rate tokens/s, burst max; starts full). The refill is fractional, so frequent
// calls do not lose sub-token credit.

export class TokenBucket {
  #tokens: number;
  #last: number;
  readonly #now: () => number;
  constructor(
    readonly rate: number,
    readonly burst: number,
    now: () => number,
  ) {
    this.#now = now;
    this.#tokens = burst;
    this.#last = now();
  }
  #refill(): void {
    const t = this.#now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((t - this.#last) / 1000) * this.rate);
    this.#last = t;
  }
  /** Milliseconds until `n` tokens are available (0 = now). A cost above the burst waits for a full bucket. */
  delay(n: number): number {
    this.#refill();
    const need = Math.min(n, this.burst);
    return this.#tokens >= need ? 0 : Math.max(1, Math.ceil(((need - this.#tokens) * 1000) / this.rate));
  }
  /**
   * Take `n` tokens now, going into debt if need be, and return how long the caller must wait
   * for them (ms). Successive reservations queue up at the bucket's rate.
   */
  reserve(n: number): number {
    this.#refill();
    this.#tokens -= n;
    return this.#tokens >= 0 ? 0 : Math.max(1, Math.ceil((-this.#tokens * 1000) / this.rate));
  }

  consume(n: number): void {
    this.#refill();
    this.#tokens = Math.max(0, this.#tokens - n);
  }
}
