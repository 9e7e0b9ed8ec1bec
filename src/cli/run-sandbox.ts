// The run's sandbox (per profile: config.lua's keys, --sandbox over them), and what the program
// says about it: how a given tool call would run (the permission question, the json records, a
// permission engine's explanations).

import type { RunMode, Sandbox } from '../sandbox/sandbox.js';

/** The builtin tools whose processes the sandbox wraps (they report how each call ran themselves). */
export const PROCESS_TOOLS: ReadonlySet<string> = new Set(['shell_exec', 'bg_exec']);
/** The builtin tools clm runs itself, checked by the sandbox's file guard. */
const FILE_TOOLS: ReadonlySet<string> = new Set(['read_file', 'write_file', 'list_dir']);

export interface ToolRun {
  mode: RunMode;
  /** As the permission question shows it in brackets: `sandbox: workspace-write, no network`, `NOT sandboxed`. */
  text: string;
}

const MCP_PREFIX = 'mcp__';
const sanitize = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_');

/** The configured MCP servers that opted in to the sandbox (`sandbox = true`), by name. */
export function sandboxedMcpServers(entries: readonly unknown[] | undefined): Set<string> {
  const out = new Set<string>();
  for (const e of entries ?? []) {
    const o = e as { name?: unknown; sandbox?: unknown };
    if (o && typeof o.name === 'string' && o.sandbox === true) out.add(o.name);
  }
  return out;
}

/** How a call of tool `name` would run under `sb` (`mcpSandboxed`: the MCP servers that opted in). */
export function toolRun(sb: Sandbox, name: string, mcpSandboxed: ReadonlySet<string> = new Set()): ToolRun {
  if (PROCESS_TOOLS.has(name)) return { mode: sb.inForce, text: sb.runs() };
  const files = sb.files ? sb.configured : null;
  if (FILE_TOOLS.has(name)) return files ? { mode: files, text: `sandbox: ${files}` } : { mode: 'full', text: 'NOT sandboxed' };
  if (name.startsWith(MCP_PREFIX)) {
    const opted = [...mcpSandboxed].some((s) => name.startsWith(`${MCP_PREFIX}${sanitize(s)}__`));
    return opted ? { mode: sb.inForce, text: sb.runs() } : { mode: 'unconfined', text: 'NOT sandboxed (MCP server not opted in)' };
  }
  // A plugin: its file API is checked in clm; its http.* is not the sandbox's to confine.
  return files ? { mode: files, text: `sandbox: ${files} for files, network open` } : { mode: 'full', text: 'NOT sandboxed' };
}
