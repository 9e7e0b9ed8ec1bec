// How clm has V8 compile WebAssembly (the Lua runtime, the bash grammar) without the costs its
// defaults bring to a short-lived process.
//
// Tier-up: V8 runs new wasm code from its baseline compiler (Liftoff) and recompiles functions
// that ran enough with TurboFan on background threads. For tree-sitter-bash one parse is enough,
// and the recompile costs ~0.6 s of CPU and ~40 MiB — a one-shot run that judges ten commands
// pays it for nothing. Raising --wasm-tiering-budget (how much a function runs before it is
// optimized) while a module compiles keeps its code on Liftoff for a long while (the grammar: about
// a hundred commands judged); V8 reads the budget as it compiles, so it is raised for the compile
// alone and then restored.
//
// The event loop: V8 holds no event-loop handle while it compiles. When nothing else is pending
// (a one-shot run waiting for the parser), Node finds the loop empty and blocks in its drain of
// background tasks — and that drain waits for every tier-up compile in flight too, so the code
// that runs from the compile's completion (the command's spawn, reading its output) stalls until
// TurboFan is done. A timer keeps the loop running while the compile is awaited, so its
// completion arrives as an ordinary loop event instead.

import { lazyBuiltin } from './lazy-builtin.js';

// node:v8 costs ~4 ms to load: only a compile without tier-up needs it.
const v8 = lazyBuiltin<typeof import('node:v8')>('node:v8');

/**
 * --wasm-tiering-budget by V8 major version (Node 20: 11, Node 22: 12, Node 24: 13), as
 * `node --v8-options` gives it: what a compile without tier-up restores afterwards. Under a V8 not
 * listed, flags are left alone and such a compile tiers up like any other.
 */
export const TIERING_BUDGETS: Readonly<Record<string, number>> = { '11': 1_800_000, '12': 13_000_000, '13': 13_000_000 };

/** Compiles under way that asked for no tier-up: the budget is restored when the last one ends. */
let quietCompiles = 0;
/**
 * The launcher (bin/clm.cjs) calls this, when set, before it writes its V8 code cache, which V8
 * checks against its flags: a cache made with the budget raised would be refused by every later
 * start. A compile still under way then tiers up as usual.
 */
const BEFORE_CODE_CACHE = Symbol.for('clm.before-code-cache');
const hooks = globalThis as Record<symbol, (() => void) | undefined>;

function raise(budget: number): void {
  v8().setFlagsFromString(`--wasm-tiering-budget=${2 ** 30}`);
  hooks[BEFORE_CODE_CACHE] = () => restore(budget);
}

function restore(budget: number): void {
  if (!hooks[BEFORE_CODE_CACHE]) return;
  v8().setFlagsFromString(`--wasm-tiering-budget=${budget}`);
  hooks[BEFORE_CODE_CACHE] = undefined;
}

export interface CompileOptions {
  /** Let V8 optimize hot functions as usual (default true). */
  tierUp?: boolean;
}

/**
 * Run `compile` (whatever compiles and instantiates the module) with the event loop held open
 * until it settles and, unless `tierUp`, with the tiering budget raised for its duration.
 */
export function compileWasm<T>(compile: () => Promise<T>, opts: CompileOptions = {}): Promise<T> {
  const budget = opts.tierUp === false ? TIERING_BUDGETS[process.versions.v8.split('.')[0]] : undefined;
  if (budget && quietCompiles++ === 0) raise(budget);
  const hold = setInterval(() => {}, 2 ** 30);
  let running: Promise<T>;
  try {
    running = compile();
  } catch (e) {
    running = Promise.reject(e);
  }
  return running.finally(() => {
    clearInterval(hold);
    if (budget && --quietCompiles === 0) restore(budget);
  });
}
