// The tools an agent gets besides the builtins: the Lua plugins of its directories and the MCP
// servers of its configuration, started together for one agent and closed with it. Each reports
// when it is ready (or failed) as an event; `ready` resolves when the first request may go (a
// plugin set served from the schema cache does not hold it back).

import { basename, dirname, sep } from 'node:path';
import type { Secrets } from '../host/redact.js';
import { clmDir } from '../host/xdg-dirs.js';
import type { PluginHost } from '../lua/index.js';
import type { McpConnection, McpManager } from '../mcp/index.js';
import type { CliArgs } from './args.js';
import { onProcessExit } from './exit-hooks.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { startPluginTools } from './plugin-tools.js';
import type { ToolTarget } from '../mcp/tool-sync.js';
import type { ResolvedRun } from './resolve-run.js';
import type { RuntimeEvent } from './runtime-events.js';

export interface ToolSourcesOptions {
  run: ResolvedRun;
  args: CliArgs;
  env: NodeJS.ProcessEnv;
  /** The plugin directories (pluginDirs()). */
  dirs: string[];
  /** The sandbox plugins' file API and opted-in MCP servers obey. */
  sandbox: Sandbox;
  /** Where tools go (the agent, through the tool policy). */
  target: ToolTarget;
  /** Names plugins may not take. */
  reservedNames: string[];
  cacheDir?: string;
  emit(e: RuntimeEvent | { type: 'notice'; text: string }): void;
  log?: (line: string) => void;
  /** The run's secrets, never written to the plugin tools cache. */
  secrets?: Secrets;
}

/** Where a tool comes from (`/tools`): a plugin (its file, once the plugins are loaded) or an MCP server. */
export type ToolOrigin = { kind: 'plugin'; file?: string } | { kind: 'mcp'; server: string };

/**
 * Where a tool comes from, as `/tools` says it: `builtin`, `mcp server NAME`, `plugin FILE` with
 * the file under the home directory as `~/…`, and a seed plugin (one clm ships) by its file name alone.
 */
export function originText(from: ToolOrigin | undefined, o: { home?: string; seedDir: string | null }): string {
  if (!from) return 'builtin';
  if (from.kind === 'mcp') return `mcp server ${from.server}`;
  const file = from.file;
  if (!file) return 'plugin';
  if (o.seedDir && dirname(file) === o.seedDir) return `seed plugin ${basename(file)}`;
  if (o.home && file.startsWith(o.home + sep)) return `plugin ~${file.slice(o.home.length)}`;
  return `plugin ${file}`;
}

/** One configured MCP server as `/mcp` shows it. */
export interface McpServerView {
  name: string;
  transport: 'stdio' | 'http';
  state: 'connecting' | 'ready' | 'down' | 'failed' | 'needs-login' | 'closed';
  /** Why it is failed or down. */
  error: string | null;
  tools: number;
}

export interface ToolSources {
  readonly ready: Promise<void>;
  /** Where the tool `name` comes from, when one of these sources registered it. */
  origin(name: string): ToolOrigin | undefined;
  /** The configured MCP servers (none before the MCP client has loaded). */
  mcpServers(): McpServerView[];
  /** Connect to the MCP server `name` again; settles with how it is then. Throws when there is no such server. */
  reconnectMcp(name: string): Promise<McpServerView>;
  /**
   * Log in to the HTTP MCP server `name` (OAuth: the browser, or the URL given to `say`), then
   * connect to it again; settles with how it is then. Throws when there is no such server or the
   * login fails.
   */
  loginMcp(name: string, say: (text: string) => void): Promise<McpServerView>;
  /** After `ready`: settles when the MCP servers still starting then are up or failed; null when none is. */
  pendingMcp(): Promise<void> | null;
  /** Stop the plugin worker and the MCP servers (also when still starting). */
  close(): Promise<void>;
}

export function startToolSources(o: ToolSourcesOptions): ToolSources {
  const notice = (text: string) => o.emit({ type: 'notice', text });
  const pluginTools = new Set<string>();
  let pluginHost: PluginHost | null = null;
  const dirs = o.dirs;
  const plugins = dirs.length
    ? startPluginTools({
        dirs,
        sandbox: o.sandbox.files?.policy,
        reservedNames: o.reservedNames,
        toolsConfig: o.run.toolsConfig,
        target: {
          addTool: (d) => {
            o.target.addTool(d);
            pluginTools.add(d.name);
          },
          removeTool: (n) => {
            pluginTools.delete(n);
            o.target.removeTool(n);
          },
        },
        cacheDir: o.cacheDir,
        notice,
        log: o.log,
        secrets: o.secrets,
      })
    : null;
  const pluginsReady = plugins?.ready.then((h) => {
    pluginHost = h;
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
  const stateDir = clmDir('state', o.env).dir;
  let manager: McpManager | null = null;
  const mcp: Promise<McpManager | null> = o.run.mcpServers?.length
    ? (async () => {
        const { connectMcpServers, toolSync } = await import('../mcp/index.js');
        const m = connectMcpServers(o.run.mcpServers, {
          oauth: stateDir ? { stateDir, onSecret: (v) => o.secrets?.add(v) } : undefined,
          log: o.log,
          onNotice: notice,
          onToolsChanged: toolSync(o.target, notice),
          readyTimeoutMs: o.run.mcpReadyTimeoutMs,
          confine: (req) => o.sandbox.confineServer(req),
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
  const connection = (name: string): McpConnection => {
    const c = manager?.get(name);
    if (c) return c;
    const known = manager?.connections.map((x) => x.name) ?? [];
    throw new Error(`no MCP server '${name}'${known.length ? ` (configured: ${known.join(', ')})` : ' is configured'}`);
  };
  const view = (c: McpConnection): McpServerView => ({
    name: c.name,
    transport: c.spec.transport,
    state: c.state,
    error: c.lastError,
    tools: c.tools.length,
  });
  return {
    ready,
    origin: (name) => {
      const server = manager?.connections.find((c) => c.tools.some((t) => t.name === name));
      if (server) return { kind: 'mcp', server: server.name };
      return pluginTools.has(name) ? { kind: 'plugin', file: pluginHost?.fileOf(name) } : undefined;
    },
    mcpServers: () => manager?.connections.map(view) ?? [],
    reconnectMcp: async (name) => {
      const c = connection(name);
      await c.reconnect();
      return view(c);
    },
    loginMcp: async (name, say) => {
      const c = connection(name);
      if (!stateDir) throw new Error('no state directory to keep the login in (neither XDG_STATE_HOME nor HOME is usable)');
      const [{ login }, { openBrowser }] = await Promise.all([import('../mcp/mcp-oauth.js'), import('../mcp/open-browser.js')]);
      await login(c.spec, { stateDir, onSecret: (v) => o.secrets?.add(v), open: (url) => openBrowser(url, o.env), say });
      await c.reconnect();
      return view(c);
    },
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
