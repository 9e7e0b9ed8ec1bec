// MCP client adapter over @modelcontextprotocol/client. The CLI imports this lazily
// (`await import('./index.js')`) when mcp_servers are configured; the SDK itself is loaded
// on the first connect (sdk.ts), so a bundle that inlines this module still starts without it.

export { parseMcpServers, DEFAULT_MCP_TIMEOUT_MS, type McpServerConfig, type McpServerSpec, type ParsedMcpConfig } from './config.js';
export { McpConnection, type McpConnectionOptions, type McpServerState } from './connection.js';
export { McpManager, connectMcpServers, DEFAULT_READY_TIMEOUT_MS, type McpOptions, type McpReadyReport } from './manager.js';
export { callResultToText, contentItemToText } from './content.js';
export { RestartBudget } from './restart-budget.js';
export { mcpToolName, sanitizeNamePart, MCP_TOOL_PREFIX } from './tool-names.js';
export { buildToolDefs, type ListedTool } from './tool-defs.js';
export { toolSync, type ToolTarget } from './tool-sync.js';
