// Node's own modules loaded at their first use: a module that one path needs (child processes,
// hashing, readline, TLS) stays off the start-up of every other path.

import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/** A getter for the Node module `specifier`, loaded when first called. */
export function lazyBuiltin<T>(specifier: `node:${string}`): () => T {
  let mod: T | undefined;
  return () => (mod ??= load(specifier) as T);
}
