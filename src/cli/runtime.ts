// Everything a run needs, for every mode: configuration and connection, the host with its debug
// log, the agent with builtin, plugin and MCP tools, the session log. createRuntime returns as
// soon as the agent exists; the slow parts (plugin worker, MCP servers, connection probe) start
// together and report as events, and `ready` resolves when start-up is over. The probe is not
// waited for (its context size is used once it arrives), so it adds no round trip to a turn.

import { createAgent, type Agent } from '../core/agent.js';
import type { AgentEvent } from '../core/events.js';
import type { PermissionRequest, ProviderKind, ToolDef } from '../core/types.js';
import { resolveConnection, type Connection, type ConnectionFlags } from '../config/index.js';
import { createNodeHost, type NodeHost } from '../host/node.js';
import { createDebugLog } from '../host/debug-log.js';
import { builtinTools, stopBackgroundJobs } from '../builtin-tools/index.js';
import { sessionDir, type Session } from '../session/index.js';
import type { CliArgs } from './args.js';
import { agentConfig } from './agent-config.js';
import { killToolGroupsOnExit } from './exit-hooks.js';
import { Masker } from './guard.js';
import { maskedTool } from './masked-tool.js';
import { advertised, applyPolicy, unmatchedPatterns, type ToolPolicy } from './tool-policy.js';
import { resolveRun, type ResolvedRun } from './resolve-run.js';
import type { RuntimeEvent } from './runtime-events.js';
import { SessionLog, type ResumedSession, type SessionOutcome } from './session-log.js';
import { startToolSources, type ToolSources } from './tool-sources.js';

export type { RuntimeEvent } from './runtime-events.js';
export type { ResumedSession, SessionOutcome } from './session-log.js';
export { sessionLine } from './session-log.js';

/** Everything a run reports: the current agent's events and the runtime's own. */
export type RunEvent = AgentEvent | RuntimeEvent;

/** The optional settings of a Connection, cleared before another connection is put in. */
const NO_CONNECTION = {
  providerName: undefined,
  contextSize: undefined,
  autocompactPct: undefined,
  rateTokensPerSec: undefined,
  rateBurst: undefined,
  disableParallelToolCalls: undefined,
  maxTokens: undefined,
  reasoningEffort: undefined,
} satisfies Partial<Connection>;

/** How long a resumed run waits for the probe's context size before going on without it. */
const RESUME_PROBE_WAIT_MS = 5000;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

export interface Runtime {
  /** The current agent (switchAgent replaces it). */
  readonly agent: Agent;
  readonly host: NodeHost;
  /** The resolved run of the current agent. */
  readonly run: ResolvedRun;
  /** The open session file, if any (known for sure once `ready` resolved). */
  readonly session: Session | null;
  /** What a resumed session restored, including the whole transcript for replay on screen. */
  readonly resumed: ResumedSession | null;
  /** Start-up is over: plugins (unless cached) and MCP servers ready, session open, a resumed conversation compacted if it had to be. */
  readonly ready: Promise<void>;
  /** The tools offered to the model (the policy hides the refused ones). */
  advertisedTools(): string[];
  /** Every event from now on, across agent switches; returns the function that stops it. */
  subscribe(fn: (e: RunEvent) => void): () => void;
  /** A fresh session file from here on; the old one is deleted when it holds no conversation. */
  rotateSession(): Session | null;
  /**
   * Replace the agent by one for the profile `name` (empty history unless `keepHistory`: then the
   * conversation so far goes on under the new profile; the session goes on either way), with its
   * own plugins and MCP servers; resolves when its start-up is over.
   */
  switchAgent(name: string, o?: { keepHistory?: boolean }): Promise<void>;
  /**
   * The connection `flags` name, resolved as at start-up over the current profile's config.lua:
   * CLM_API_KEY (set and non-empty) is the key, --reasoning-effort wins. Throws ConfigError.
   */
  connectionFor(flags: ConnectionFlags): Connection;
  /** Move the current agent to another connection (model, endpoint, dialect, key, limits); the history is kept. */
  setConnection(conn: Connection): void;
  /** Close everything; whether the session file was kept and what it lacks (sessionLine says it). */
  close(): Promise<SessionOutcome>;
  /**
   * Close the session file now, synchronously (an exit path that cannot wait for close(): a
   * crash, a signal); an empty one is deleted. Whether it was kept; close() later says the same.
   */
  closeSessionNow(): SessionOutcome;
}

export interface RuntimeOptions {
  args: CliArgs;
  /** Every event of the run from the start (configuration warnings included). */
  onEvent(e: RunEvent): void;
  /** Gated tool calls; absent ⇒ allowed once (headless modes, restricted by the policy). */
  onPermission?(req: PermissionRequest): void;
  /** Headless modes: run tools without prompting, restricted by the policy. */
  policy?: ToolPolicy;
  env?: NodeJS.ProcessEnv;
  /** Resume this session id (already chosen). */
  resumeId?: string;
  /** The connection and settings are known (start-up goes on). */
  onResolved?(run: ResolvedRun): void;
  /** Compact at the end of a turn that leaves the context over the threshold (the interactive UI). */
  autocompactAtTurnEnd?: boolean;
  /** Values to mask in everything shown (API keys, secrets.lua values), as soon as they are known, before any notice; again with more after a profile switch. */
  onSecrets?(secrets: readonly string[]): void;
}

/** One agent with its tool sources; a switch of profile makes a new one. */
interface Generation {
  run: ResolvedRun;
  agent: Agent;
  sources: ToolSources;
  probe: Promise<unknown>;
  /** Every tool name any source registered, to tell a policy pattern that matches nothing. */
  seen: Set<string>;
  detach(): void;
}

export async function createRuntime(o: RuntimeOptions): Promise<Runtime> {
  killToolGroupsOnExit();
  const env = o.env ?? process.env;
  const args = o.args;
  const subscribers = new Set<(e: RunEvent) => void>([o.onEvent]);
  const emit = (e: RunEvent) => {
    for (const s of [...subscribers]) s(e);
  };
  const notice = (text: string) => emit({ type: 'notice', text });
  const log = createDebugLog(env.CLM_DEBUG_LOG);
  const firstRun = await resolveRun(args, env, log ?? undefined);
  o.onResolved?.(firstRun);
  o.onSecrets?.(firstRun.secrets);
  for (const s of firstRun.secrets) log?.addSecret(s);
  for (const w of firstRun.warnings) notice(w);
  const host = createNodeHost({ log: log ?? null });
  const policy = o.policy ?? {};
  // Every source's tools: the policy, then the run's secrets masked in what they return.
  const toolSecrets = new Masker();
  toolSecrets.add(firstRun.secrets);
  const wrap = (d: ToolDef) => maskedTool(applyPolicy(policy, d), () => toolSecrets.secrets);
  // The session meta names the profile asked for (-a, switchAgent), not the configured default.
  let profile = args.agent;
  const meta = (run: ResolvedRun) => ({ model: run.model, provider: run.providerName ?? run.provider, agent: profile });
  const sessions = new SessionLog({ resumeId: o.resumeId, secrets: firstRun.secrets, env, notice, meta: meta(firstRun) });

  let closed = false;
  let sessionClosed: SessionOutcome | null = null;
  const closeSession = (): SessionOutcome => (sessionClosed ??= sessions.close());

  const start = (run: ResolvedRun): Generation => {
    const agent = createAgent(
      agentConfig(run, { stream: !args.noStream, builtinTools: builtinTools().map(wrap), autocompactAtTurnEnd: o.autocompactAtTurnEnd }),
      host,
      {
        onPermission: o.onPermission ?? ((req) => req.respond('allow_once')),
      },
    );
    const unsubscribe = [agent.subscribe(emit), sessions.follow(agent)];
    const seen = new Set(agent.toolNames);
    const sources = startToolSources({
      run,
      args,
      env,
      emit,
      log: log ?? undefined,
      reservedNames: builtinTools().map((t) => t.name),
      cacheDir: stateDirOrNull(env),
      target: {
        addTool: (d) => {
          agent.addTool(wrap(d));
          seen.add(d.name);
        },
        removeTool: (n) => agent.removeTool(n),
      },
    });
    // Started with the rest; its answer (the context size) is used when it comes.
    const probe = agent.checkConnection();
    return {
      run,
      agent,
      sources,
      probe,
      seen,
      detach: () => {
        for (const u of unsubscribe) u();
      },
    };
  };

  /** Once every source has registered its tools (now, or when the MCP servers still starting are up or failed): the policy's patterns that match nothing. */
  const judgePolicy = (g: Generation) => {
    if (!policy.allow && !policy.deny?.length) return;
    const judge = () => {
      if (!closed && gen === g) for (const w of unmatchedPatterns(policy, [...g.seen])) notice(w);
    };
    const pending = g.sources.pendingMcp();
    if (!pending) judge();
    else void pending.then(judge);
  };

  let gen = start(firstRun);
  const restored = sessions.resumed?.messages ?? [];
  if (restored.length) gen.agent.restoreHistory(restored);

  const ready = (async () => {
    const g = gen;
    await g.sources.ready;
    judgePolicy(g);
    sessions.open();
    emit({ type: 'session', id: sessions.session?.id ?? null });
    // A resumed conversation may already be over the compaction threshold: fold it first rather
    // than send a request the server cannot take. That needs the context size, so here (only
    // here) the probe is waited for when the configuration does not give it.
    if (restored.length && !g.run.contextSize)
      await Promise.race([g.probe, new Promise((r) => setTimeout(r, RESUME_PROBE_WAIT_MS).unref())]);
    if (restored.length && g.agent.overAutocompactThreshold()) {
      notice(`the resumed conversation (~${g.agent.ctxUsed} tokens) is over the compaction threshold; compacting it first`);
      const r = await g.agent.compactAndWait('resume');
      if (r.status !== 0) notice(`compaction failed (${r.error ?? r.status}); continuing with the whole conversation`);
    }
    emit({ type: 'ready' });
  })();
  ready.catch(() => {
    /* the mode awaiting it reports the failure */
  });

  const stop = async (g: Generation) => {
    g.agent.close();
    g.detach();
    await g.sources.close();
  };

  return {
    get agent() {
      return gen.agent;
    },
    get run() {
      return gen.run;
    },
    get session() {
      return sessions.session;
    },
    host,
    resumed: sessions.resumed,
    ready,
    advertisedTools: () => advertised(policy, gen.agent.toolNames),
    subscribe: (fn) => {
      subscribers.add(fn);
      return () => {
        subscribers.delete(fn);
      };
    },
    rotateSession: () => {
      const s = sessions.rotate(meta(gen.run));
      emit({ type: 'session', id: s?.id ?? null });
      return s;
    },
    switchAgent: async (name, so = {}) => {
      if (gen.agent.busy) throw new CliError('busy; try again when idle', 1);
      const run = await resolveRun({ ...args, agent: name }, env, log ?? undefined);
      o.onSecrets?.(run.secrets);
      toolSecrets.add(run.secrets);
      for (const s of run.secrets) {
        log?.addSecret(s);
        sessions.addSecret(s);
      }
      for (const w of run.warnings) notice(w);
      const history = so.keepHistory ? gen.agent.messages : [];
      await stop(gen);
      profile = name;
      gen = start(run);
      // Already in the session file; restoring does not log them again.
      if (history.length) gen.agent.restoreHistory(history);
      await gen.sources.ready;
      judgePolicy(gen);
      emit({ type: 'ready' });
    },
    connectionFor: (flags) =>
      resolveConnection(gen.run.config, { reasoningEffort: args.reasoningEffort, ...flags }, { CLM_API_KEY: env.CLM_API_KEY }),
    setConnection: (conn) => {
      if (gen.agent.busy) throw new CliError('busy; try again when idle', 1);
      // The profile's part of the run stays (its system prompt and volatile tools included); the
      // connection's is replaced whole, so nothing of the previous model's settings is left over.
      const { systemPrompt, volatileTools } = gen.run;
      const run: ResolvedRun = { ...gen.run, ...NO_CONNECTION, ...conn, systemPrompt, volatileTools };
      gen.agent.setProvider(agentConfig(run, { stream: !args.noStream, builtinTools: [] }));
      gen.run = run;
      toolSecrets.add(conn.secrets);
      for (const s of conn.secrets) {
        log?.addSecret(s);
        sessions.addSecret(s);
      }
    },
    close: async () => {
      closed = true;
      gen.agent.close();
      await Promise.allSettled([gen.sources.close(), stopBackgroundJobs()]);
      gen.detach();
      host.close();
      return closeSession();
    },
    closeSessionNow: () => closeSession(),
  };
}

function stateDirOrNull(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return sessionDir({ env });
  } catch {
    return undefined;
  }
}

export type { ProviderKind };
