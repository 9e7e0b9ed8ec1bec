// All configured servers together: start them, gather their tools, wait for them (boundedly)
// before the first request, close them. The C program sent its first request without waiting,
// so a one-shot run could never call an MCP tool; here the caller awaits waitReady() first and a
// server that is still starting when the bound passes joins later (onToolsChanged + a notice).

import type { ToolDef } from '../core/types.js';
import { parseMcpServers } from './config.js';
import { McpConnection, type McpConnectionOptions } from './connection.js';

export interface McpOptions extends McpConnectionOptions {
  /** Default bound for waitReady(), in ms (default 10 000). */
  readyTimeoutMs?: number;
}

export interface McpReadyReport {
  /** Servers whose tools are registered. */
  ready: string[];
  /** Servers that failed to connect, with the reason. */
  failed: { name: string; error: string }[];
  /** Servers still starting when the bound passed; they join later. */
  pending: string[];
}

export const DEFAULT_READY_TIMEOUT_MS = 10_000;

export class McpManager {
  readonly connections: readonly McpConnection[];
  /** Messages for skipped config entries (also sent to onNotice). */
  readonly configErrors: readonly string[];
  private readonly readyTimeoutMs: number;

  constructor(
    connections: McpConnection[],
    configErrors: string[],
    private readonly opts: McpOptions = {},
  ) {
    this.connections = connections;
    this.configErrors = configErrors;
    this.readyTimeoutMs = opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  }

  get(name: string): McpConnection | undefined {
    return this.connections.find((c) => c.name === name);
  }

  /** Every tool currently offered, server by server in configuration order. */
  tools(): ToolDef[] {
    return this.connections.flatMap((c) => c.tools);
  }

  /** Wait until every server is ready or failed, or `boundMs` passed. Never rejects. */
  async waitReady(boundMs: number = this.readyTimeoutMs): Promise<McpReadyReport> {
    const all = Promise.allSettled(this.connections.map((c) => c.ready));
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, boundMs));
    });
    try {
      await Promise.race([all, bound]);
    } finally {
      clearTimeout(timer);
    }
    const report: McpReadyReport = { ready: [], failed: [], pending: [] };
    for (const c of this.connections) {
      if (c.state === 'ready') report.ready.push(c.name);
      else if (c.state === 'connecting') {
        report.pending.push(c.name);
        const secs = Math.round(boundMs / 100) / 10;
        const text = `mcp: ${c.name}: not ready after ${secs} s; continuing without it (its tools are added when it is ready)`;
        this.opts.log?.(text);
        this.opts.onNotice?.(text);
      } else report.failed.push({ name: c.name, error: c.lastError ?? c.state });
    }
    return report;
  }

  /** Stop every server (children are terminated). Safe to call more than once. */
  async close(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.close()));
  }

  /**
   * SIGKILL every stdio server's process group at once, synchronously: for the process's 'exit'
   * event (a signal, a second Ctrl-C), which skips the graceful close.
   */
  killNow(): void {
    for (const c of this.connections) c.kill();
  }
}

/**
 * Validate `mcp_servers` (config.lua's list) and start connecting to each valid entry.
 * Returns at once; tools arrive through onToolsChanged and manager.tools().
 */
export function connectMcpServers(servers: unknown, opts: McpOptions = {}): McpManager {
  const { servers: specs, errors } = parseMcpServers(servers);
  for (const e of errors) {
    opts.log?.(e);
    opts.onNotice?.(e);
  }
  const conns = specs.map((s) => new McpConnection(s, opts));
  const manager = new McpManager(conns, errors, opts);
  for (const c of conns) c.start();
  return manager;
}
