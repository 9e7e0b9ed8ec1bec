// The typed shape of a loaded configuration (clm-config(5)). Plain data: no functions, so it can
// be logged, compared and passed around freely; the Lua state lives behind it (see load.ts).

import type { ProviderKind, ReasoningEffort } from '../core/types.js';
import type { SandboxMode } from '../sandbox/policy.js';

export type { ProviderKind, ReasoningEffort };

/** A configured reasoning effort; "off" sends no reasoning parameter even where a model's entry sets one. */
export type ReasoningSetting = ReasoningEffort | 'off';

/** How the interactive UI uses the terminal: the alternate screen, or the normal one with its scrollback. */
export type UiMode = 'fullscreen' | 'inline';

/** What a model's tokens cost, in US dollars per million tokens (`price`). */
export interface Price {
  input: number;
  output: number;
  /** Input tokens served from the server's prompt cache (default: the input price). */
  cachedInput?: number;
}

/** providers[name].models[id] */
export interface ModelSettings {
  /** Context window in tokens (0 = learn from the server). */
  contextSize?: number;
  /** Auto-compaction threshold in percent (1–99). */
  autocompactPct?: number;
  /** Replaces the top-level/profile system_prompt for this model. */
  systemPrompt?: string;
  /** The model's reasoning effort, unless the top level or the profile sets one. */
  reasoningEffort?: ReasoningSetting;
  /** Its price (wins over the provider's). */
  price?: Price;
}

/** providers[name] */
export interface ProviderSettings {
  name: string;
  /** Default 'openai'. */
  kind: ProviderKind;
  /** Base URL without the dialect path (e.g. https://api.groq.com/openai/v1). */
  url?: string;
  apiKey?: string;
  rateTokensPerSec?: number;
  rateBurst?: number;
  disableParallelToolCalls?: boolean;
  maxTokens?: number;
  /** The price of its models that do not name their own. */
  price?: Price;
  models: Record<string, ModelSettings>;
}

/** `permissions`: rules as written (`shell_exec(npm test *)`), checked by the permissions module. */
export interface PermissionSettings {
  allow?: string[];
  ask?: string[];
  deny?: string[];
  /** What an `ask` outcome does where nobody can be asked: run (default, as without rules) or deny. */
  unattended?: 'allow' | 'deny';
  /** `read_only_commands`: a shell command known to only read runs unasked in the sandbox (default true). */
  readOnlyCommands?: boolean;
}

/** The settings of one table (top level, a profile, or the two merged). */
export interface ConfigValues {
  /** The `agent` key: default profile name. */
  agent?: string;
  /** `provider/model-id` or a bare model id. */
  model?: string;
  providers: Record<string, ProviderSettings>;
  systemPrompt?: string;
  /** Per-plugin config tables, keyed by plugin name (each plugin sees its own as clm.config). */
  tools: Record<string, Record<string, unknown>>;
  /** fnmatch patterns; undefined when not configured. */
  volatileTools?: string[];
  /** Raw `mcp_servers` entries, validated by the MCP module (parseMcpServers). */
  mcpServers: unknown[];
  showThinking: boolean;
  expandOutput: boolean;
  /** Repair tool calls models write as text or with broken arguments (`repair`); undefined = on. */
  repair?: boolean;
  /** The interactive UI's screen mode (`ui`); undefined = full screen. */
  ui?: UiMode;
  /** How long the first request waits for MCP servers to be ready. */
  mcpReadyTimeoutMs?: number;
  /** Tool rounds per turn (0 = unlimited); undefined = the program's default. */
  maxIterations?: number;
  /** Reasoning effort for every model (wins over a model's own). */
  reasoningEffort?: ReasoningSetting;
  /**
   * Connection limits (ms / bytes; 0 = none): the probe, the wait for a reply's first byte, the
   * gap between stream events, a whole reply's body after its first byte, a reply's size.
   */
  probeTimeoutMs?: number;
  firstByteTimeoutMs?: number;
  streamIdleTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxReplyBytes?: number;
  /** Tool calls of one batch running at once (0 = no limit). */
  maxParallelTools?: number;
  /** The sandbox of tool processes and file accesses (`sandbox`, `sandbox_writable`, `sandbox_network`, `sandbox_unreadable`). */
  sandbox?: SandboxMode;
  sandboxWritable?: string[];
  sandboxNetwork?: boolean;
  sandboxUnreadable?: string[];
  /** `agents_md`: read the AGENTS.md files into the system prompt (default true). */
  agentsMd?: boolean;
  /** `agents_md_max_bytes`: the cap on those files together. */
  agentsMdMaxBytes?: number;
  permissions?: PermissionSettings;
  /** The `checkpoints` table: undo, rewind and diff of what turns change. */
  checkpoints?: CheckpointsConfig;
}

/** config.lua's `checkpoints = { … }` (docs/config.md); absent keys take the defaults. */
export interface CheckpointsConfig {
  enabled?: boolean;
  gitignore?: boolean;
  maxFileBytes?: number;
  maxFiles?: number;
  keep?: number;
  maxBytes?: number;
  gitTimeoutMs?: number;
}

export interface ClmConfig extends ConfigValues {
  /** The config directory ($XDG_CONFIG_HOME/clm or ~/.config/clm). */
  dir: string;
  configPath: string;
  secretsPath: string;
  /** The active profile's name (from -a or the config's `agent` key); undefined = none. */
  agent?: string;
  /** Where the active profile came from: configPath (inline agents[name]) or agents/<name>.lua. */
  profilePath?: string;
  /** clm.secrets as plain data ({} when secrets.lua is missing or broken). */
  secrets: Record<string, unknown>;
  /** The effective table (top level with the profile merged over it), for keys not typed here. */
  raw: Record<string, unknown>;
  /** Problems that did not stop loading: broken secrets.lua, unknown keys. One line each. */
  warnings: string[];
}
