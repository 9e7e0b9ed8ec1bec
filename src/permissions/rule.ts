// A permission rule: `tool` (every call of it) or `tool(pattern)`, with an effect (allow, ask,
// deny) and where it came from (config.lua and its line, the rules file and its line, a flag,
// this session). The tool is an fnmatch pattern over tool names (`mcp__github__*`); what the
// pattern matches depends on the tool (match.ts).

export type Effect = 'allow' | 'ask' | 'deny';

export const EFFECTS: readonly Effect[] = ['allow', 'ask', 'deny'];

/** deny > ask > allow. */
export const SEVERITY: Record<Effect, number> = { allow: 0, ask: 1, deny: 2 };

export interface RuleSource {
  kind: 'config' | 'rules-file' | 'flag' | 'session';
  /** The file (config.lua, a profile, the rules file), when there is one. */
  file?: string;
  line?: number;
  /** How it is shown: `config.lua:12`, `permissions.rules:3`, `--deny-tools`, `this session`. */
  label: string;
}

export interface Rule {
  effect: Effect;
  tool: string;
  /** null: every call of the tool. */
  pattern: string | null;
  source: RuleSource;
}

/** `tool` or `tool(pattern)`, or a sentence saying what is wrong with `text`. */
export function parseRule(text: string): { tool: string; pattern: string | null } | string {
  const s = text.trim();
  if (!s) return 'an empty rule';
  const open = s.indexOf('(');
  if (open < 0) {
    if (/[\s)]/.test(s)) return `'${s}' is not a tool name (write tool or tool(pattern))`;
    return { tool: s, pattern: null };
  }
  const tool = s.slice(0, open);
  if (!tool || /[\s)]/.test(tool)) return `'${s}' does not start with a tool name (write tool or tool(pattern))`;
  if (!s.endsWith(')')) return `'${s}' has no closing ')' at its end`;
  const pattern = s.slice(open + 1, -1);
  if (!pattern) return `'${s}' has an empty pattern (the bare tool name means every call)`;
  return { tool, pattern };
}

/** The rule as written: `shell_exec(npm test *)`. */
export function ruleText(r: { tool: string; pattern: string | null }): string {
  return r.pattern === null ? r.tool : `${r.tool}(${r.pattern})`;
}

/** Characters of a pattern that are not wildcards: the measure of "most specific". */
function literalLength(p: string): number {
  return p.replace(/\\(.)/g, '$1').replace(/[*?]/g, '').length;
}

/**
 * How specific a rule is: a pattern over a bare tool, then the more literal characters in the
 * pattern, then in the tool name. It names the rule that decided among several of the winning
 * effect; it never makes an allow beat an ask or a deny.
 */
export function specificity(r: Rule): number {
  const tool = literalLength(r.tool);
  return r.pattern === null ? tool : 1_000_000 + literalLength(r.pattern) * 1000 + tool;
}
