// What the runtime itself reports, beside the agent's events: how start-up goes, and how each
// tool call ran in the sandbox. A front end can draw before any of it is done.

import type { ModeInForce } from '../sandbox/policy.js';
import type { RunMode } from '../sandbox/sandbox.js';

import type { Decided } from './permission-desk.js';

export type RuntimeEvent =
  /** The Lua plugins are up (their tools registered), or the worker could not start them. */
  | { type: 'plugins'; status: 'ready'; tools: string[]; errors: string[] }
  | { type: 'plugins'; status: 'failed' }
  /** The MCP servers are ready or failed; `pending` ones were still starting when the bound passed (they join later). */
  | { type: 'mcp'; ready: string[]; failed: { name: string; error: string }[]; pending: string[] }
  /** The session file in use: opened, resumed, or fresh after a rotation (null: logging is off). */
  | { type: 'session'; id: string | null }
  /** Start-up is over (also after switchAgent): tools registered, session open, a resumed conversation compacted if it had to be. */
  | { type: 'ready' }
  /** How a tool call was decided: by a rule (which, where), the person, or the default. */
  | { type: 'permission'; id: string; name: string; decided: Decided }
  /** The sandbox in force is known (at start, after a profile switch): its mode and how process tools run. */
  | { type: 'sandbox'; mode: ModeInForce; runs: string }
  /** How a tool call ran (before its tool_result for the shell tools, as it starts for the others). */
  | { type: 'tool_sandbox'; id: string; name: string; mode: RunMode };

const TYPES: ReadonlySet<string> = new Set([
  'plugins',
  'mcp',
  'session',
  'ready',
  'permission',
  'sandbox',
  'tool_sandbox',
] satisfies RuntimeEvent['type'][]);

export function isRuntimeEvent(e: { type: string }): e is RuntimeEvent {
  return TYPES.has(e.type);
}
