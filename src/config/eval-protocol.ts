// Messages between the config evaluator (main thread) and its worker.

import type { ChunkOutcome, RunOptions } from './lua-state.js';

/** Default time one chunk (config.lua, secrets.lua, one profile) may run. */
export const CONFIG_BUDGET_MS = 2000;

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
  | { t: 'result'; id: number; outcome: ChunkOutcome }
  | { t: 'result'; id: number; convert: { keyPath: string; message: string } };
