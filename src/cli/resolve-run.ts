// From flags, environment and (when present) config.lua to one resolved run: the connection,
// the agent profile's settings, plugin config and MCP servers. src/config loads its Lua runtime
// only when a config.lua exists, so a run without one stays cheap.

import { existsSync } from 'node:fs';
import {
  configDir,
  loadConfig,
  resolveConnection,
  secretStrings,
  secretsWithoutConfig,
  type ClmConfig,
  type ConfigValues,
  type ConnectionSettings,
} from '../config/index.js';
import type { CheckpointsConfig, UiMode } from '../config/types.js';
import type { SandboxSettings } from '../sandbox/workspace.js';
import type { CliArgs } from './args.js';

export { configDir };

/**
 * Tool rounds per turn unless --max-turns or max_iterations says otherwise: far above what a real
 * task needs (a few hundred rounds), low enough that a server that never stops asking for tools
 * ends in a minute or so instead of running up requests without end. The library's own default
 * stays 0 (unlimited).
 */
export const DEFAULT_MAX_ITERATIONS = 1000;

export interface ResolvedRun extends ConnectionSettings {
  agentName?: string;
  toolsConfig?: Record<string, unknown>;
  mcpServers?: unknown[];
  mcpReadyTimeoutMs?: number;
  /** Tool rounds per turn (0 = unlimited). */
  maxIterations: number;
  /** config.lua's connection and tool limits, for the agent. */
  limits: Pick<
    ConfigValues,
    'probeTimeoutMs' | 'firstByteTimeoutMs' | 'streamIdleTimeoutMs' | 'bodyTimeoutMs' | 'maxReplyBytes' | 'maxParallelTools'
  >;
  /** Non-fatal problems found while loading the configuration. */
  warnings: string[];
  /** The interactive UI's settings from config.lua (`ui`, `show_thinking`, `expand_output`). */
  ui?: UiMode;
  showThinking: boolean;
  expandOutput: boolean;
  /** config.lua's `checkpoints` table. */
  checkpoints?: CheckpointsConfig;
  /** Repair the tool calls models write as text or with broken arguments (config.lua `repair`, default on). */
  repair: boolean;
  /** The loaded configuration with the profile applied (null without config.lua): providers, models, profiles for the UI's switches. */
  config: ClmConfig | null;
  /** The sandbox: config.lua's keys, --sandbox over `sandbox`. */
  sandbox: SandboxSettings;
}

/** A configuration problem: exit status 2 with the message. */
export class ConfigProblem extends Error {}

/**
 * What to say when the run's provider is a hosted API (https) and no key is set for it: its server
 * will refuse the requests with a 401 that does not say where the key goes.
 */
function keylessProvider(conn: ConnectionSettings, env: NodeJS.ProcessEnv): string | null {
  const name = conn.providerName;
  if (!name || conn.apiKey || !conn.base.startsWith('https://')) return null;
  const dir = configDir(env) ?? '~/.config/clm';
  const plain = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
  const entry = plain ? name : `["${name}"]`;
  return `provider '${name}' has no API key: add ${entry} = "…" to ${dir}/secrets.lua (read by api_key = clm.secrets${plain ? `.${name}` : entry} in config.lua), or set CLM_API_KEY`;
}

/** The run the configuration (none: null) and the flags make, over its connection. */
function resolvedOf(args: CliArgs, cfg: ClmConfig | null, conn: ConnectionSettings, warnings: string[]): ResolvedRun {
  return {
    ...conn,
    agentName: cfg?.agent,
    toolsConfig: cfg?.tools,
    mcpServers: cfg?.mcpServers,
    mcpReadyTimeoutMs: cfg?.mcpReadyTimeoutMs,
    maxIterations: args.maxTurns ?? cfg?.maxIterations ?? DEFAULT_MAX_ITERATIONS,
    limits: {
      probeTimeoutMs: cfg?.probeTimeoutMs,
      firstByteTimeoutMs: cfg?.firstByteTimeoutMs,
      streamIdleTimeoutMs: cfg?.streamIdleTimeoutMs,
      bodyTimeoutMs: cfg?.bodyTimeoutMs,
      maxReplyBytes: cfg?.maxReplyBytes,
      maxParallelTools: cfg?.maxParallelTools,
    },
    warnings,
    ui: cfg?.ui,
    showThinking: cfg?.showThinking ?? false,
    expandOutput: cfg?.expandOutput ?? false,
    checkpoints: cfg?.checkpoints,
    repair: cfg?.repair ?? true,
    config: cfg,
    sandbox: {
      mode: args.sandbox ?? cfg?.sandbox,
      writable: cfg?.sandboxWritable,
      network: cfg?.sandboxNetwork,
      unreadable: cfg?.sandboxUnreadable,
    },
  };
}

export async function resolveRun(args: CliArgs, env: NodeJS.ProcessEnv, log?: (l: string) => void): Promise<ResolvedRun> {
  try {
    const cfg = await loadConfig({ agent: args.agent, log, env });
    if (!cfg && args.agent)
      throw new Error(`agent '${args.agent}' not found (there is no config.lua in ${configDir(env) ?? '~/.config/clm'})`);
    const conn = resolveConnection(
      cfg,
      { model: args.model, provider: args.provider, url: args.url, reasoningEffort: args.reasoningEffort },
      { CLM_API_KEY: env.CLM_API_KEY },
    );
    const warnings = [...(cfg?.warnings ?? [])];
    const keyless = keylessProvider(conn, env);
    if (keyless) warnings.push(keyless);
    if (!cfg) {
      const bare = await secretsWithoutConfig({ log, env });
      for (const v of secretStrings(bare.secrets)) if (!conn.secrets.includes(v)) conn.secrets.push(v);
      warnings.push(...bare.warnings);
    }
    return resolvedOf(args, cfg, conn, warnings);
  } catch (e) {
    // Messages start with the file's short name (config.lua:4: …); add where that file is.
    const file = (e as { file?: unknown }).file;
    const msg = (e as Error).message;
    throw new ConfigProblem(typeof file === 'string' && file && !msg.includes(file) && existsSync(file) ? `${msg} (in ${file})` : msg);
  }
}
