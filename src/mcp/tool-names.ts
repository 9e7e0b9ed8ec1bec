// Agent-facing names of MCP tools: `mcp__<server>__<tool>`. Provider APIs accept only
// [A-Za-z0-9_-] in function names (MCP allows more, e.g. "."), so other characters become "_";
// the server is still called with the tool's own name.

export const MCP_TOOL_PREFIX = 'mcp__';

export function sanitizeNamePart(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, '_');
}

export function mcpToolName(server: string, tool: string): string {
  return `${MCP_TOOL_PREFIX}${sanitizeNamePart(server)}__${sanitizeNamePart(tool)}`;
}
