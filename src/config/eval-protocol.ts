// Messages between the config evaluator (main thread, evaluator.ts) and its worker
// (eval-worker.ts), and the types both sides speak: what a chunk is run with and what it gave.

/** Default time one chunk (config.lua, secrets.lua, one profile) may run. */
export const CONFIG_BUDGET_MS = 2000;

export type ChunkOutcome =
  | { ok: true; value: unknown; luaType: string }
  /** keyPath: the chunk ran, but the value there cannot become config data. */
  | { ok: false; message: string; keyPath?: string };

export interface RunOptions {
  budgetMs?: number;
  /** Leave out unconvertible values instead of failing (secrets.lua). */
  lenient?: boolean;
  /** When the chunk returns a table, make it `clm.secrets`. */
  publishAsSecrets?: boolean;
}

export interface EvalRequest {
  id: number;
  source: Uint8Array;
  chunkName: string;
  opts: RunOptions;
}

export type EvalReply =
  | { t: 'ready' }
  | { t: 'failed'; message: string }
  | { t: 'log'; line: string }
  | { t: 'result'; id: number; outcome: ChunkOutcome };
