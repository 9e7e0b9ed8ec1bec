// One ToolDef per listed MCP tool. Gated like every external tool (noPrompt false), with the
// server's timeout, read-only when the server says so (`readOnlyHint`); the call itself is the
// connection's business.

import type { ToolDef, ToolInvocation } from '../core/types.js';
import { mcpToolName } from './tool-names.js';

/** The fields of an MCP `Tool` this adapter uses. */
export interface ListedTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
  /** Hints the server gives; `readOnlyHint: true` marks a tool that changes nothing (no checkpoint before it). */
  annotations?: { readOnlyHint?: unknown };
}

export type CallTool = (toolName: string, inv: ToolInvocation) => Promise<void>;

/** JSON Schema for the arguments: the tool's inputSchema when it is an object schema, else `{type:"object"}`. */
function parametersOf(schema: unknown): object {
  if (schema !== null && typeof schema === 'object' && !Array.isArray(schema) && typeof (schema as { type?: unknown }).type === 'string')
    return schema;
  return { type: 'object' };
}

/** ToolDefs for a server's tools; a second tool mapping to an already used name is dropped (reported via onDuplicate). */
export function buildToolDefs(
  server: string,
  tools: readonly ListedTool[],
  timeoutMs: number,
  call: CallTool,
  onDuplicate?: (tool: string, name: string) => void,
): ToolDef[] {
  const defs: ToolDef[] = [];
  const used = new Set<string>();
  for (const t of tools) {
    const name = mcpToolName(server, t.name);
    if (used.has(name)) {
      onDuplicate?.(t.name, name);
      continue;
    }
    used.add(name);
    const toolName = t.name;
    defs.push({
      name,
      description: t.description || t.name,
      parameters: parametersOf(t.inputSchema),
      timeoutMs,
      noPrompt: false,
      ...(t.annotations?.readOnlyHint === true ? { readOnly: true } : {}),
      invoke: (inv) => call(toolName, inv),
    });
  }
  return defs;
}
