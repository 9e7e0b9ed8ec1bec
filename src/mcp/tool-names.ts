// Agent-facing names of MCP tools: `mcp__<server>__<tool>`. Provider APIs accept only
// [A-Za-z0-9_-] in function names (MCP allows more, e.g. "."), so other characters become "_";
// the server is still called with the tool's own name.

import { createHash } from 'node:crypto';

export const MCP_TOOL_PREFIX = 'mcp__';

export function sanitizeNamePart(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** Provider APIs also cap function names at 64 characters. */
export const MAX_TOOL_NAME = 64;

export function mcpToolName(server: string, tool: string): string {
  const name = `${MCP_TOOL_PREFIX}${sanitizeNamePart(server)}__${sanitizeNamePart(tool)}`;
  if (name.length <= MAX_TOOL_NAME) return name;
  // Too long: keep the start readable and a hash of the whole so distinct tools stay distinct.
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_TOOL_NAME - 9)}_${hash}`;
}
