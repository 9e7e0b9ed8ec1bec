// Token bucket limiting how often a crashed stdio server is respawned: a burst of 3, then one
// more every 30 s — a server that crashes on every call cannot turn into a fork loop.

export class RestartBudget {
  private tokens: number;
  private last: number;

  constructor(
    private readonly burst = 3,
    private readonly refillMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    // A full bucket accrues nothing: its refill clock starts when a token is spent.
    if (this.tokens >= this.burst) {
      this.last = t;
      return;
    }
    const gained = Math.floor((t - this.last) / this.refillMs);
    if (gained <= 0) return;
    this.tokens = Math.min(this.burst, this.tokens + gained);
    this.last = this.tokens === this.burst ? t : this.last + gained * this.refillMs;
  }

  /** Spend a token if one is available. */
  take(): boolean {
    this.refill();
    if (this.tokens <= 0) return false;
    this.tokens--;
    return true;
  }

  /** Milliseconds until take() can succeed (0 if it can now). */
  msUntilNext(): number {
    this.refill();
    if (this.tokens > 0) return 0;
    return Math.max(0, this.last + this.refillMs - this.now());
  }
}
