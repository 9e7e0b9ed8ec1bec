// Monotonic milliseconds for durations, from process.hrtime: the `performance` global's first use
// loads Node's perf_hooks (a dozen modules, ~1.5 ms of a start) and clm needs only differences.

/** Milliseconds from an arbitrary origin; only differences mean anything. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
