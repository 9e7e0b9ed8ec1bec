// Main-thread side of config evaluation: the Lua state lives in a worker thread (eval-worker.ts)
// and every chunk has a wall-clock watchdog here. The count hook inside the worker stops Lua
// loops with a message naming the line; it cannot interrupt a single C-level call (string.find
// or string.match with a pathological pattern), so when a chunk has not answered well after its
// budget, the worker is terminated and the chunk fails. The main event loop stays free all the
// while, so SIGTERM and Ctrl-C end a start-up stuck in config.lua.

import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CONFIG_BUDGET_MS, type ChunkOutcome, type EvalReply, type EvalRequest, type RunOptions } from './eval-protocol.js';

/**
 * After a chunk's budget, how long the worker may take to report the overrun itself (the count
 * hook, or its forced stop of a pcall loop 1 s later) before it is terminated from here.
 */
export const WATCHDOG_GRACE_MS = 1500;

interface Location {
  script: URL | string;
  eval?: boolean;
}

/** The worker script from wherever this code runs: sources (tests, via tsx), tsc's dist/config, or the CLI bundle. */
function workerLocation(): Location {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    // Node 20 resolves a worker's entry before any --import preload runs: register tsx first.
    const api = import.meta.resolve('tsx/esm/api');
    const target = new URL('./eval-worker.ts', here).href;
    return {
      script: `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(target)}); })`,
      eval: true,
    };
  }
  const sibling = new URL('./eval-worker.js', here);
  if (/\/config\/[^/]+\.js$/.test(here) && existsSync(fileURLToPath(sibling))) return { script: sibling };
  return { script: new URL('./config-worker.js', here) }; // esbuild bundle: next to dist/cli.js
}

type Waiter = (o: ChunkOutcome) => void;

interface Thread {
  worker: Worker;
  ready: Promise<void>;
  /** Why this worker cannot run chunks any more, or null. */
  dead: string | null;
}

export class ConfigEvaluator {
  private thread: Thread | null = null;
  private readonly pending = new Map<number, Waiter>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly log: (line: string) => void = () => {}) {
    this.thread = this.spawn();
  }

  private spawn(): Thread {
    const loc = workerLocation();
    const worker = new Worker(loc.script, {
      eval: loc.eval ?? false,
      execArgv: [],
      // Lua memory is capped inside the wasm instance; this bounds the worker's own JS heap.
      resourceLimits: { maxOldGenerationSizeMb: 128 },
    });
    let ready!: () => void;
    let failed!: (e: Error) => void;
    const th: Thread = {
      worker,
      ready: new Promise<void>((res, rej) => {
        ready = res;
        failed = rej;
      }),
      dead: null,
    };
    th.ready.catch(() => {});
    // Only a chunk being evaluated keeps the process alive: an evaluator started early and
    // never used (or idle between chunks) does not.
    worker.unref();
    const die = (reason: string) => {
      if (th.dead) return;
      th.dead = reason;
      failed(new Error(reason));
      this.failPending(reason);
    };
    worker.on('message', (m: EvalReply) => {
      switch (m.t) {
        case 'ready':
          ready();
          return;
        case 'failed':
          die(`cannot start the config Lua state: ${m.message}`);
          return;
        case 'log':
          this.log(m.line);
          return;
        case 'result': {
          const w = this.pending.get(m.id);
          if (!w) return;
          this.pending.delete(m.id);
          if (!this.pending.size) worker.unref();
          w(m.outcome);
          return;
        }
      }
    });
    worker.on('error', (e) => die(`config evaluation failed: ${e.message}`));
    worker.on('exit', (code) => die(`config evaluation stopped unexpectedly (worker exit ${code})`));
    return th;
  }

  /** Run one chunk in the worker; resolves with its outcome, also when it had to be stopped. */
  async run(source: Uint8Array, chunkName: string, opts: RunOptions = {}): Promise<ChunkOutcome> {
    if (this.closed) return { ok: false, message: 'the config evaluator is closed' };
    // A worker stopped by the watchdog is replaced: the chunks after a runaway one still run.
    if (!this.thread || this.thread.dead) this.thread = this.spawn();
    const th = this.thread;
    th.worker.ref();
    try {
      await th.ready;
    } catch {
      return { ok: false, message: th.dead ?? 'the config evaluator failed to start' };
    }
    if (th.dead) return { ok: false, message: th.dead };
    th.worker.ref();
    const id = this.nextId++;
    const budgetMs = opts.budgetMs ?? CONFIG_BUDGET_MS;
    return new Promise<ChunkOutcome>((resolve) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        const secs = budgetMs >= 1000 ? `${budgetMs / 1000} s` : `${budgetMs} ms`;
        const message = `evaluation took longer than ${secs} and was stopped (stuck inside one library call, e.g. string.find or string.match with a pathological pattern?)`;
        this.log(`config: ${chunkName.replace(/^=/, '')}: ${message}`);
        th.dead = message;
        void th.worker.terminate();
        resolve({ ok: false, message });
      }, budgetMs + WATCHDOG_GRACE_MS);
      this.pending.set(id, (o) => {
        clearTimeout(timer);
        resolve(o);
      });
      const req: EvalRequest = { id, source, chunkName, opts };
      th.worker.postMessage(req);
    });
  }

  /** Stop the worker (idempotent). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const th = this.thread;
    this.thread = null;
    if (th && !th.dead) {
      th.dead = 'the config evaluator is closed';
      void th.worker.terminate();
    }
    this.failPending('the config evaluator is closed');
  }

  private failPending(reason: string): void {
    for (const [, w] of this.pending) w({ ok: false, message: reason });
    this.pending.clear();
  }
}
