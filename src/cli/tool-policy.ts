// Headless permission policy: --allow-tools / --deny-tools (comma-separated fnmatch patterns).
// Applied by wrapping each tool as it is registered, so it also covers no-prompt tools and tools
// that arrive later (MCP); a refused call reaches the model as a denial.

import { matchesAny } from '../core/fnmatch.js';
import type { ToolDef } from '../core/types.js';

export interface ToolPolicy {
  allow?: string[];
  deny?: string[];
}

/** Why `name` is refused, or null when it may run. */
export function policyRefusal(p: ToolPolicy, name: string): string | null {
  if (p.deny?.length && matchesAny(p.deny, name)) return 'denied by policy (--deny-tools)';
  // An empty allow list (`--allow-tools ""`) allows nothing, not everything.
  if (p.allow && !matchesAny(p.allow, name)) return 'denied by policy (not in --allow-tools)';
  return null;
}

export function applyPolicy(p: ToolPolicy, def: ToolDef): ToolDef {
  const why = policyRefusal(p, def.name);
  if (!why) return def;
  return { ...def, noPrompt: true, invoke: (inv) => inv.fail(why) };
}
