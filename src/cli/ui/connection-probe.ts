// When the screen asks whether the server is there: at start (the runtime's own probe), every
// 20 s, after a failed turn and after every switch of model, provider or agent. A probe asked
// for out of turn restarts the 20 s, so probes never bunch up.

export const PROBE_INTERVAL_MS = 20_000;

export interface ProbeTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

const realTimers: ProbeTimers = {
  setInterval: (fn, ms) => {
    const h = setInterval(fn, ms);
    // The screen's own input keeps the program alive; a probe timer must not.
    h.unref?.();
    return h;
  },
  clearInterval: (h) => clearInterval(h as NodeJS.Timeout),
};

export class ConnectionProbe {
  private timer: unknown = null;

  constructor(
    private readonly probe: () => void,
    private readonly intervalMs = PROBE_INTERVAL_MS,
    private readonly timers: ProbeTimers = realTimers,
  ) {}

  /** Begin the periodic probes (the first one is the runtime's, at start-up). */
  start(): void {
    this.stop();
    this.timer = this.timers.setInterval(() => this.probe(), this.intervalMs);
  }

  /** Probe now, and the next periodic one a whole interval from now. */
  now(): void {
    this.probe();
    if (this.timer !== null) this.start();
  }

  stop(): void {
    if (this.timer !== null) {
      this.timers.clearInterval(this.timer);
      this.timer = null;
    }
  }
}
