// The tool policy: --allow-tools / --deny-tools (comma-separated fnmatch patterns). Applied by
// wrapping each tool as it is registered, so it also covers no-prompt tools and tools that
// arrive later (plugins, MCP). A refused tool is not advertised to the model, and a call to it
// anyway reaches the model as a denial; a tool --allow-tools names runs without a question.

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
  const why = policyRefusal(p, def.name);
  if (why) return { ...def, hidden: true, noPrompt: true, invoke: (inv) => inv.fail(why) };
  // Named by --allow-tools: the person already answered for it.
  if (p.allow) return { ...def, noPrompt: true };
  return def;
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
