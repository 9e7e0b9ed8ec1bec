// Everything a run needs, assembled once for every mode: configuration and connection, the
// host with its debug log, the agent with builtin, plugin and MCP tools, the session log.
// Slow parts (plugin worker, MCP servers, connection probe) start together.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createAgent, type Agent } from '../core/agent.js';
import type { AgentCallbacks, AgentConfig, Message, ProviderKind, ToolDef } from '../core/types.js';
import { createNodeHost, type NodeHost } from '../host/node.js';
import { createDebugLog } from '../host/debug-log.js';
import { maskSecrets } from '../host/redact.js';
import { builtinTools, stopBackgroundJobs } from '../tools/index.js';
import { killAllGroupsNow } from '../tools/process-group.js';
import { createSession, loadSession, openSession, sessionDir, type Session } from '../session/index.js';
import { seedPluginDir } from '../lua/paths.js';
import { startPluginTools, type ToolTarget } from './plugin-tools.js';
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
  /** Stop everything; says whether the session file was kept (see sessionLine). */
  close(): Promise<SessionOutcome>;
}

export interface SessionOutcome {
  sessionKept: boolean;
  /** Writing the session failed: how many messages (and compactions) it lacks, and why. */
  incomplete?: { lost: number; error: string };
}

/** The line printed at exit about the session: how to resume it, or what it lacks; null when none was kept. */
export function sessionLine(session: Session | null, o: SessionOutcome): string | null {
  if (!session || !o.sessionKept) return null;
  if (o.incomplete) {
    const n = o.incomplete.lost;
    return `session: ${session.id} is incomplete: the last ${n} ${n === 1 ? 'entry was' : 'entries were'} not saved (${o.incomplete.error})\n`;
  }
  return `session: ${session.id} (resume with clm -r ${session.id})\n`;
}

export interface RuntimeOptions {
  args: CliArgs;
  callbacks: AgentCallbacks;
  /** Lines for the user (notices, plugin/MCP status). */
  notice(text: string): void;
  /** The run's secrets, as soon as the configuration is loaded (before any notice): for masking output. */
  onSecrets?(secrets: readonly string[]): void;
  /** Headless modes: run tools without prompting, restricted by the policy. */
  policy?: ToolPolicy;
  env?: NodeJS.ProcessEnv;
  /** Resume this session id (already chosen). */
  resumeId?: string;
}

export async function createRuntime(o: RuntimeOptions): Promise<Runtime> {
  // Whatever ends the process, no tool process group outlives it (signals.ts exits through here).
  process.on('exit', killAllGroupsNow);
  const env = o.env ?? process.env;
  const args = o.args;
  const log = createDebugLog(env.CLM_DEBUG_LOG);
  const run = await resolveRun(args, env, log ?? undefined);
  for (const s of run.secrets) log?.addSecret(s);
  o.onSecrets?.(run.secrets);
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
    if (loaded.skipped) o.notice(`session ${o.resumeId}: ${loaded.skipped} damaged ${loaded.skipped === 1 ? 'line was' : 'lines were'} skipped; ${loaded.skipped === 1 ? 'its content is' : 'their content is'} not restored`);
    session = openSession(o.resumeId);
  }

  const userOnMessage = o.callbacks.onMessage;
  // While a resumed conversation is compacted before the first prompt, that compaction's state
  // changes and turn end are not the caller's turn.
  let quiet = false;
  let sessionFailure: { lost: number; error: string } | undefined;
  /** Write to the session log; the first failure is reported once, logging stops and what is lost is counted. */
  const toSession = (write: (s: Session) => void) => {
    if (!session) return;
    if (sessionFailure) { sessionFailure.lost++; return; }
    try { write(session); } catch (e) {
      const cause = (e as { cause?: NodeJS.ErrnoException }).cause;
      sessionFailure = { lost: 1, error: cause?.code ? `${cause.code}: ${errnoMessage(cause)}` : (e as Error).message };
      o.notice(`session logging failed; disabled (${(e as Error).message})`);
    }
  };
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
    ...definedOnly(run.limits),
    builtinTools: builtinTools().map(wrap),
  };
  const agent = createAgent(cfg, host, {
    ...o.callbacks,
    onPermission: o.callbacks.onPermission ?? ((req) => req.respond('allow_once')),
    onState: (st) => { if (!quiet) o.callbacks.onState?.(st); },
    onTurnDone: (st) => { if (!quiet) o.callbacks.onTurnDone?.(st); },
    // secrets.lua values and API keys never reach the session file, even when a tool printed one.
    onCompaction: (c) => {
      toSession((s) => s.appendCompaction({ ...c, summary: maskSecrets(c.summary, run.secrets) }));
      o.callbacks.onCompaction?.(c);
    },
    onMessage: (m) => {
      toSession((s) => s.append(maskMessage(m, run.secrets)));
      userOnMessage?.(m);
    },
  });
  if (restored.length) agent.restoreHistory(restored);

  const target = {
    addTool: (d: ToolDef) => agent.addTool(wrap(d)),
    removeTool: (n: string) => agent.removeTool(n),
  };

  // Start the slow parts together.
  const probe = agent.checkConnection();
  const dirs = pluginDirs(run, args, env, o.notice);
  const plugins = dirs.length ? startPluginTools({
    dirs, reservedNames: builtinTools().map((t) => t.name), toolsConfig: run.toolsConfig, target,
    cacheDir: stateDirOrNull(env), notice: o.notice, log: log ?? undefined,
  }) : null;
  const mcp = run.mcpServers?.length ? startMcp(run, target, o.notice, log ?? undefined) : Promise.resolve(null);
  // With cached plugin schemas the first request does not wait for the Lua worker.
  const [, , mcpManager] = await Promise.all([probe, plugins && !plugins.fromCache ? plugins.ready : null, mcp]);

  // The session file is created once start-up is over, so a run interrupted while starting
  // leaves no empty session behind.
  if (!session) {
    try {
      session = createSession({ model: run.model, provider: run.providerName ?? run.provider, agent: args.agent, env });
    } catch (e) {
      o.notice(`session logging disabled: ${(e as Error).message}`);
    }
  }

  // A resumed conversation may already be over the compaction threshold (of the context size the
  // probe just learned): fold it first rather than send a request the server cannot take.
  if (restored.length && agent.overAutocompactThreshold()) {
    o.notice(`the resumed conversation (~${agent.ctxUsed} tokens) is over the compaction threshold; compacting it first`);
    quiet = true;
    const r = await agent.compactAndWait().finally(() => { quiet = false; });
    if (r.status !== 0) o.notice(`compaction failed (${r.error ?? r.status}); continuing with the whole conversation`);
  }

  return {
    agent, host, run, session,
    close: async () => {
      agent.close();
      await Promise.allSettled([plugins?.close(), mcpManager?.close(), stopBackgroundJobs()]);
      host.close();
      let kept = false;
      try { kept = session ? session.close() : false; } catch (e) {
        o.notice(`closing the session failed: ${(e as Error).message}`);
      }
      return sessionFailure ? { sessionKept: kept, incomplete: sessionFailure } : { sessionKept: kept };
    },
  };
}

function pluginDirs(run: ResolvedRun, args: CliArgs, env: NodeJS.ProcessEnv, notice: (t: string) => void): string[] {
  const dirs: string[] = [];
  const cdir = configDir(env);
  if (args.plugins) {
    if (!existsSync(args.plugins)) notice(`plugins: ${args.plugins} does not exist; no plugins loaded`);
    dirs.push(args.plugins);
  } else {
    const def = cdir ? join(cdir, 'plugins') : null;
    // First run without a plugin dir: the packaged seed plugins, without writing into the user's config.
    if (def && existsSync(def)) dirs.push(def);
    else {
      try { dirs.push(seedPluginDir()); } catch (e) { notice(`plugins: ${(e as Error).message}`); }
    }
  }
  if (run.agentName && cdir) dirs.push(join(cdir, 'agents', run.agentName));
  return dirs.filter((d) => existsSync(d) && readdirSync(d).some((n) => n.endsWith('.lua')));
}

async function startMcp(run: ResolvedRun, target: ToolTarget, notice: (t: string) => void, log?: (l: string) => void) {
  const { connectMcpServers, toolSync } = await import('../mcp/index.js');
  const m = connectMcpServers(run.mcpServers, { log, onNotice: notice, onToolsChanged: toolSync(target, notice), readyTimeoutMs: run.mcpReadyTimeoutMs });
  // An abrupt end (a signal, a second Ctrl-C) skips the graceful close: stop the servers anyway.
  process.on('exit', () => {
    for (const c of m.connections) if (c.pid) { try { process.kill(c.pid, 'SIGKILL'); } catch { /* gone */ } }
  });
  await m.waitReady();
  return m;
}

/** "no space left on device" from "ENOSPC: no space left on device, write". */
function errnoMessage(e: NodeJS.ErrnoException): string {
  return e.message.replace(/^[A-Z0-9]+: /, '').replace(/, \w+$/, '');
}

function maskMessage(m: Message, secrets: readonly string[]): Message {
  if (!secrets.length) return m;
  const out: Message = { ...m, content: m.content === null ? null : maskSecrets(m.content, secrets) };
  if (m.toolCalls) out.toolCalls = m.toolCalls.map((c) => ({ ...c, args: maskSecrets(c.args, secrets) }));
  return out;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function stateDirOrNull(env: NodeJS.ProcessEnv): string | undefined {
  try { return sessionDir({ env }); } catch { return undefined; }
}

export type { ProviderKind };
