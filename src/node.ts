// Public API for Node: `import { createNodeHost, builtinTools } from 'clm/node'`.
// Heavy parts (Lua plugins, MCP, config) are separate lazy imports re-exported as async loaders
// so importing this module stays cheap.

export { createNodeHost, type NodeHost, type NodeHostOptions } from './host/node.js';
export { createDebugLog, type DebugLog } from './host/debug-log.js';
export { redact, maskSecrets, Secrets, SecretStream } from './host/redact.js';
export {
  builtinTools,
  readFileTool,
  writeFileTool,
  listDirTool,
  shellExecTool,
  bgExecTool,
  stopBackgroundJobs,
  BUILTIN_TOOLS_SYSTEM_PROMPT,
} from './builtin-tools/index.js';
export * from './session/index.js';
export {
  Checkpoints,
  CheckpointError,
  DEFAULT_CHECKPOINT_SETTINGS,
  changeLine,
  changeSummary,
  colourDiff,
  describeRewind,
  gitAvailable,
  GitError,
  workspaceRoot,
  type CheckpointSettings,
  type CheckpointsOptions,
  type ChangeKind,
  type DiffStyles,
  type FileChange,
  type PlanItem,
  type RestoreResult,
  type Rewind,
  type TurnDiff,
  type TurnRecord,
  type UndoPlan,
} from './checkpoints/index.js';

export type { LoadOptions, PluginHost, LoadError } from './lua/index.js';
export type { McpOptions, McpManager, McpReadyReport } from './mcp/index.js';
export { toolSync, type ToolTarget } from './mcp/tool-sync.js';

/** Load Lua plugins (clm-tool(5)); see src/lua. */
export async function loadPlugins(opts: import('./lua/index.js').LoadOptions): Promise<import('./lua/index.js').PluginHost> {
  return (await import('./lua/index.js')).loadPlugins(opts);
}

/** Connect MCP servers; see src/mcp. */
export async function connectMcpServers(
  servers: unknown,
  opts?: import('./mcp/index.js').McpOptions,
): Promise<import('./mcp/index.js').McpManager> {
  return (await import('./mcp/index.js')).connectMcpServers(servers, opts);
}
