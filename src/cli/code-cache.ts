// The launcher's V8 code cache (bin/clm.cjs) holds the functions a run compiled before the cache
// was made, and a later start reads all of them. An interactive run says when its start is done,
// so the cache holds its start-up and not whatever a long first session went on to compile
// (measured: a cache after one turn with a tool made every later first frame ~7 ms slower).

/** The start is done: the launcher writes its code cache now, when one is due (else nothing). */
export function startIsDone(): void {
  const now = (globalThis as Record<symbol, (() => void) | undefined>)[Symbol.for('clm.code-cache-now')];
  now?.();
}
