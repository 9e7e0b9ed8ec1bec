// Messages between the main thread (worker-supervisor.ts) and the Lua host worker (worker.ts), and the
// SharedArrayBuffer the worker stamps around every entry into Lua so the main thread can see a
// runaway C call (a worker stuck in one string.find cannot answer messages).

import type { SandboxPolicy } from '../sandbox/policy.js';

export interface PluginSource {
  /** Position in load order; stable across worker restarts. */
  index: number;
  /** File name without ".lua" (the clm.config key, and the name in messages). */
  name: string;
  /** Full path. */
  file: string;
  source: Uint8Array;
}

export interface ToolInfo {
  plugin: number;
  name: string;
  description: string;
  /** params_schema as JSON text with a stable key order, or null when none was given. */
  parameters: string | null;
  /** timeout_ms as given (the per-call CPU budget and wall-clock deadline), or null (30 s of each). */
  timeoutMs: number | null;
  noPrompt: boolean;
  hidden: boolean;
}

export interface LoadError {
  plugin: string;
  file: string;
  message: string;
}

export type ToMain =
  | { t: 'loaded'; tools: ToolInfo[]; errors: LoadError[] }
  | { t: 'done'; id: number; ok: true; out: string | Uint8Array }
  | { t: 'done'; id: number; ok: false; error: string }
  | { t: 'log'; line: string }
  | { t: 'closed' };

export interface InitMessage {
  t: 'init';
  sab: SharedArrayBuffer;
  plugins: PluginSource[];
  reserved: string[];
  toolsConfig: Record<string, unknown>;
  log: boolean;
  /** The sandbox policy for clm.read_file / clm.write_file; null: unconfined. */
  sandbox: SandboxPolicy | null;
}

export type ToWorker =
  | InitMessage
  | { t: 'call'; id: number; tool: string; args: string }
  | { t: 'cancel'; id: number; reason: string }
  | { t: 'close' };

// SAB layout: Int32 [0] inside Lua (0/1), [1] plugin index, [2] call id (-1: load);
// Float64 at byte 16: wall-clock ms (performance.timeOrigin + now()) when that entry began.
export const SAB_BYTES = 24;
export const W_INSIDE = 0;
export const W_PLUGIN = 1;
export const W_CALL = 2;
export const W_SINCE_F64 = 2; // index into Float64Array over the same buffer

/** Epoch milliseconds with sub-ms precision, comparable across threads. */
export const wallNow = () => performance.timeOrigin + performance.now();
