// Work that may wait until the person stops typing. The markdown warm-up after the first frame is
// ~45 ms in one piece (marked compiles its rules' regular expressions on their first use, the
// segmenter loads its data), and a key typed meanwhile is drawn only after it: so it runs once no
// key has come for a moment, and every key typed before then moves it on.

export interface QuietTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const NODE_TIMERS: QuietTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export class QuietTask {
  #timer: unknown = null;
  #ran = false;
  readonly #run: () => Promise<void>;
  readonly #quietMs: number;
  readonly #timers: QuietTimers;
  #resolve!: () => void;
  /** Resolves once the task has run (and what it returned has settled). */
  readonly done = new Promise<void>((r) => {
    this.#resolve = r;
  });

  /** Run `run` once `quietMs` pass without a poke(). */
  constructor(quietMs: number, run: () => Promise<void>, timers: QuietTimers = NODE_TIMERS) {
    this.#quietMs = quietMs;
    this.#run = run;
    this.#timers = timers;
    this.#arm();
  }

  /** A key came: wait again, from now. */
  poke(): void {
    if (this.#ran) return;
    this.#timers.clearTimeout(this.#timer);
    this.#arm();
  }

  #arm(): void {
    this.#timer = this.#timers.setTimeout(() => {
      this.#ran = true;
      this.#run().then(this.#resolve, this.#resolve);
    }, this.#quietMs);
  }
}
