// The tool policy: --allow-tools / --deny-tools (comma-separated fnmatch patterns) as far as the
// model's offer goes: a tool they refuse is hidden as it is registered (plugins and MCP tools that
// arrive later too). Whether a call runs is the permission engine's to decide, where the same
// flags are rules (permission-setup.ts): a call to a refused tool is denied there.

import { fnmatch, matchesAny } from '../core/fnmatch.js';
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
  return policyRefusal(p, def.name) ? { ...def, hidden: true } : def;
}

/** The tools the model is offered, of those registered. */
export function advertised(p: ToolPolicy, names: readonly string[]): string[] {
  return names.filter((n) => policyRefusal(p, n) === null);
}

/** One warning per pattern that matches none of `names` (the tools of every source). */
export function unmatchedPatterns(p: ToolPolicy, names: readonly string[]): string[] {
  const out: string[] = [];
  for (const [flag, list] of [
    ['--allow-tools', p.allow],
    ['--deny-tools', p.deny],
  ] as const) {
    for (const pat of list ?? []) if (!names.some((n) => fnmatch(pat, n))) out.push(`${flag}: '${pat}' matches no tool`);
  }
  return out;
}
