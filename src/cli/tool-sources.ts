// The tools an agent gets besides the builtins: the Lua plugins of its directories and the MCP
// servers of its configuration, started together for one agent and closed with it. Each reports
// when it is ready (or failed) as an event; `ready` resolves when the first request may go (a
// plugin set served from the schema cache does not hold it back).

import type { McpManager } from '../mcp/index.js';
import type { CliArgs } from './args.js';
import { onProcessExit } from './exit-hooks.js';
import { pluginDirs, startPluginTools, type ToolTarget } from './plugin-tools.js';
import type { ResolvedRun } from './resolve-run.js';
import type { RuntimeEvent } from './runtime-events.js';

export interface ToolSourcesOptions {
  run: ResolvedRun;
  args: CliArgs;
  env: NodeJS.ProcessEnv;
  /** Where tools go (the agent, through the tool policy). */
  target: ToolTarget;
  /** Names plugins may not take. */
  reservedNames: string[];
  cacheDir?: string;
  emit(e: RuntimeEvent | { type: 'notice'; text: string }): void;
  log?: (line: string) => void;
}

export interface ToolSources {
  readonly ready: Promise<void>;
  /** After `ready`: settles when the MCP servers still starting then are up or failed; null when none is. */
  pendingMcp(): Promise<void> | null;
  /** Stop the plugin worker and the MCP servers (also when still starting). */
  close(): Promise<void>;
}

export function startToolSources(o: ToolSourcesOptions): ToolSources {
  const notice = (text: string) => o.emit({ type: 'notice', text });
  const dirs = pluginDirs({ explicit: o.args.plugins, agentName: o.run.agentName, env: o.env, notice });
  const plugins = dirs.length
    ? startPluginTools({
        dirs,
        reservedNames: o.reservedNames,
        toolsConfig: o.run.toolsConfig,
        target: o.target,
        cacheDir: o.cacheDir,
        notice,
        log: o.log,
      })
    : null;
  const pluginsReady = plugins?.ready.then((h) => {
    o.emit(
      h
        ? {
            type: 'plugins',
            status: 'ready',
            tools: h.tools.map((t) => t.name),
            errors: h.errors.map((e) => `plugin ${e.plugin}: ${e.message}`),
          }
        : { type: 'plugins', status: 'failed' },
    );
  });
  let stopKilling: (() => void) | null = null;
  let manager: McpManager | null = null;
  const mcp: Promise<McpManager | null> = o.run.mcpServers?.length
    ? (async () => {
        const { connectMcpServers, toolSync } = await import('../mcp/index.js');
        const m = connectMcpServers(o.run.mcpServers, {
          log: o.log,
          onNotice: notice,
          onToolsChanged: toolSync(o.target, notice),
          readyTimeoutMs: o.run.mcpReadyTimeoutMs,
        });
        stopKilling = onProcessExit(() => m.killNow());
        manager = m;
        return m;
      })()
    : Promise.resolve(null);
  const mcpReady = mcp.then(async (m) => {
    if (!m) return;
    const r = await m.waitReady();
    o.emit({ type: 'mcp', ready: r.ready, failed: r.failed, pending: r.pending });
  });
  // With cached plugin schemas the first request does not wait for the Lua worker.
  const ready = Promise.all([plugins && !plugins.fromCache ? pluginsReady : null, mcpReady]).then(() => {});
  return {
    ready,
    pendingMcp: () => {
      const pending = manager?.connections.filter((c) => c.state === 'connecting') ?? [];
      return pending.length ? Promise.allSettled(pending.map((c) => c.ready)).then(() => {}) : null;
    },
    close: async () => {
      await Promise.allSettled([plugins?.close(), mcp.then((m) => m?.close())]);
      stopKilling?.();
    },
  };
}
