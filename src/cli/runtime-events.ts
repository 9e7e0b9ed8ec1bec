// What the runtime itself reports, beside the agent's events: how start-up goes. A front end
// can draw before any of it is done.

export type RuntimeEvent =
  /** The Lua plugins are up (their tools registered), or the worker could not start them. */
  | { type: 'plugins'; status: 'ready'; tools: string[]; errors: string[] }
  | { type: 'plugins'; status: 'failed' }
  /** The MCP servers are ready or failed; `pending` ones were still starting when the bound passed (they join later). */
  | { type: 'mcp'; ready: string[]; failed: { name: string; error: string }[]; pending: string[] }
  /** The session file in use: opened, resumed, or fresh after a rotation (null: logging is off). */
  | { type: 'session'; id: string | null }
  /** Start-up is over (also after switchAgent): tools registered, session open, a resumed conversation compacted if it had to be. */
  | { type: 'ready' };

const TYPES: ReadonlySet<string> = new Set(['plugins', 'mcp', 'session', 'ready'] satisfies RuntimeEvent['type'][]);

export function isRuntimeEvent(e: { type: string }): e is RuntimeEvent {
  return TYPES.has(e.type);
}
