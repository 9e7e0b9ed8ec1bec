// Everything a run needs, assembled once for every mode: configuration and connection, the
// host with its debug log, the agent with builtin, plugin and MCP tools, the session log.
// Slow parts (plugin worker, MCP servers, connection probe) start together.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createAgent, type Agent } from '../core/agent.js';
import type { AgentCallbacks, AgentConfig, Message, ProviderKind, ToolDef } from '../core/types.js';
import { createNodeHost, type NodeHost } from '../host/node.js';
import { createDebugLog } from '../host/debug-log.js';
import { builtinTools, stopBackgroundJobs } from '../tools/index.js';
import { createSession, loadSession, openSession, type Session } from '../session/index.js';
import type { CliArgs } from './args.js';
import { applyPolicy, type ToolPolicy } from './tool-policy.js';
import { configDir, resolveRun, type ResolvedRun } from './resolve.js';

export class CliError extends Error {
  constructor(message: string, readonly exitCode = 2) { super(message); }
}

export interface Runtime {
  agent: Agent;
  host: NodeHost;
  run: ResolvedRun;
  session: Session | null;
  /** Print "session: <id> …" on exit when the session was kept. */
  close(): Promise<{ sessionKept: boolean }>;
}

export interface RuntimeOptions {
  args: CliArgs;
  callbacks: AgentCallbacks;
  /** Lines for the user (notices, plugin/MCP status). */
  notice(text: string): void;
  /** Headless modes: run tools without prompting, restricted by the policy. */
  policy?: ToolPolicy;
  env?: NodeJS.ProcessEnv;
  /** Resume this session id (already chosen). */
  resumeId?: string;
}

export async function createRuntime(o: RuntimeOptions): Promise<Runtime> {
  const env = o.env ?? process.env;
  const args = o.args;
  const log = createDebugLog(env.CLM_DEBUG_LOG);
  const run = await resolveRun(args, env, log ?? undefined);
  for (const s of run.secrets) log?.addSecret(s);
  for (const w of run.warnings) o.notice(w);
  const host = createNodeHost({ log: log ?? null });
  const policy = o.policy ?? {};
  const wrap = (d: ToolDef) => applyPolicy(policy, d);

  // Sessions: resume (load + reopen for append) or a fresh log.
  let session: Session | null = null;
  let restored: Message[] = [];
  if (o.resumeId !== undefined) {
    const loaded = loadSession(o.resumeId);
    restored = loaded.messages;
    session = openSession(o.resumeId);
  }

  const userOnMessage = o.callbacks.onMessage;
  let sessionFailed = false;
  const cfg: AgentConfig = {
    baseUrl: run.baseUrl,
    apiKey: run.apiKey,
    provider: run.provider,
    model: run.model,
    systemPrompt: run.systemPrompt,
    stream: !args.noStream,
    contextSize: run.contextSize,
    autocompactPct: run.autocompactPct,
    rateTokensPerSec: run.rateTokensPerSec,
    rateBurst: run.rateBurst,
    volatileTools: run.volatileTools,
    disableParallelToolCalls: run.disableParallelToolCalls,
    maxTokens: run.maxTokens,
    providerName: run.providerName,
    builtinTools: builtinTools().map(wrap),
  };
  const agent = createAgent(cfg, host, {
    ...o.callbacks,
    onPermission: o.callbacks.onPermission ?? ((req) => req.respond('allow_once')),
    onMessage: (m) => {
      if (session && !sessionFailed) {
        try { session.append(m); } catch (e) {
          sessionFailed = true;
          o.notice(`session logging failed; disabled (${(e as Error).message})`);
        }
      }
      userOnMessage?.(m);
    },
  });
  if (restored.length) agent.restoreHistory(restored);
  if (!session) {
    try {
      session = createSession({ model: run.model, provider: run.providerName ?? run.provider, agent: args.agent, env });
    } catch (e) {
      o.notice(`session logging disabled: ${(e as Error).message}`);
    }
  }

  const target = {
    addTool: (d: ToolDef) => agent.addTool(wrap(d)),
    removeTool: (n: string) => agent.removeTool(n),
  };

  // Start the slow parts together.
  const probe = agent.checkConnection();
  const plugins = loadPluginTools(run, args, env, target, o.notice, log ?? undefined);
  const mcp = run.mcpServers?.length ? startMcp(run, target, o.notice, log ?? undefined) : Promise.resolve(null);
  const [, pluginHost, mcpManager] = await Promise.all([probe, plugins, mcp]);

  return {
    agent, host, run, session,
    close: async () => {
      agent.close();
      await Promise.allSettled([pluginHost?.close(), mcpManager?.close(), stopBackgroundJobs()]);
      host.close();
      const kept = session ? session.close() : false;
      return { sessionKept: kept };
    },
  };
}

interface ToolTarget { addTool(d: ToolDef): void; removeTool(n: string): void }

async function loadPluginTools(run: ResolvedRun, args: CliArgs, env: NodeJS.ProcessEnv, target: ToolTarget, notice: (t: string) => void, log?: (l: string) => void) {
  const dirs: string[] = [];
  const cdir = configDir(env);
  if (args.plugins) dirs.push(args.plugins);
  else {
    const def = cdir ? join(cdir, 'plugins') : null;
    if (def && existsSync(def)) dirs.push(def);
    else {
      // First run: the packaged seed plugins, without writing into the user's config.
      const { seedPluginDir } = await import('../lua/paths.js');
      const seed = seedPluginDir();
      if (seed) dirs.push(seed);
    }
  }
  if (run.agentName && cdir) dirs.push(join(cdir, 'agents', run.agentName));
  const existing = dirs.filter((d) => existsSync(d));
  if (!existing.length) return null;
  const { loadPlugins } = await import('../lua/index.js');
  const host = await loadPlugins({ dirs: existing, reservedNames: builtinTools().map((t) => t.name), toolsConfig: run.toolsConfig, log });
  for (const e of host.errors) { notice(`plugin ${e.plugin}: ${e.message}`); }
  for (const t of host.tools) {
    try { target.addTool(t); } catch (e) { notice(`plugin tool ${t.name} not registered: ${(e as Error).message}`); }
  }
  return host;
}

async function startMcp(run: ResolvedRun, target: ToolTarget, notice: (t: string) => void, log?: (l: string) => void) {
  const { connectMcpServers, toolSync } = await import('../mcp/index.js');
  const m = connectMcpServers(run.mcpServers, { log, onNotice: notice, onToolsChanged: toolSync(target, notice), readyTimeoutMs: run.mcpReadyTimeoutMs });
  await m.waitReady();
  return m;
}

export type { ProviderKind };
