// Everything a run needs, for every mode: configuration and connection, the host with its debug
// log, the agent with builtin, plugin and MCP tools, the session log. createRuntime returns as
// soon as the agent exists; the slow parts (plugin worker, MCP servers) start together and report
// as events, and `ready` resolves when start-up is over. What no first request needs waits for
// that request to be on its way, or for the front end's first frame (startDeferred): the
// sandbox's availability check (a process spawned), the connection probe and the checkpoints'
// first records. Every tool call waits for the sandbox check, so it is done before any tool runs.
// The probe is not waited for (its context size is used once it arrives), so it adds no round
// trip to a turn.
//
// The run has one list of secrets, shared by everything that shows or writes: the events every
// front end gets pass one guard here (guard.ts), and the debug log, the session file, the plugin
// tools cache and what tools return are masked with the same list.

import { createAgent, DEFAULT_MODEL, type Agent } from '../core/agent.js';
import type { AgentEvent } from '../core/events.js';
import { EAGAIN } from '../core/errors.js';
import type { Host } from '../core/host.js';
import type { ProviderKind, ToolDef } from '../core/types.js';
import { resolveConnection, type ConnectionSettings, type ConnectionFlags } from '../config/index.js';
import { configDir, configDirWarning } from '../config/paths.js';
import { createNodeHost, type NodeHost } from '../host/node.js';
import { createDebugLog, type DebugLog } from '../host/debug-log.js';
import { Secrets } from '../host/redact.js';
import { builtinTools, stopBackgroundJobs } from '../builtin-tools/index.js';
import { sessionDir, type Session } from '../session/index.js';
import type { ToolRuling } from '../permissions/engine.js';
import type { CliArgs } from './args.js';
import { agentConfig, baseSystemPrompt } from './agent-config.js';
import { killToolGroupsOnExit } from './exit-hooks.js';
import { EventGuard, type EventView, viewOf } from './guard.js';
import { maskedTool } from './masked-tool.js';
import { advertised, applyPolicy, policyRefusal, unmatchedPatterns, type ToolPolicy } from './tool-policy.js';
import { attachMentions } from './file-mentions.js';
import { ProjectInstructions, withInstructions } from './project-instructions.js';
import { expandPromptCommand, promptCommands, type PromptCommand } from './prompt-commands.js';
import { type DeskFront, PermissionDesk } from './permission-desk.js';
import { fileRulesOf, newEngine, readOnlyCommandsRun, rulesFileOf, runRules } from './permission-setup.js';
import { resolveRun, type ResolvedRun } from './resolve-run.js';
import { isRuntimeEvent, type RuntimeEvent } from './runtime-events.js';
import { CliError } from './cli-error.js';
import { priceOf, UsageLedger } from './usage-ledger.js';
import { RunCheckpoints } from './run-checkpoints.js';
import type { Located } from './local-servers.js';
import type { LocalServer, Place } from './local-server.js';
import { SessionLog, type SessionLogOptions, type ResumedSession, type SessionOutcome } from './session-log.js';
import { originText, startToolSources, type McpServerView, type ToolSources } from './tool-sources.js';
import { packageRoot, seedPluginDir } from '../lua/paths.js';
import { pluginDirs } from './plugin-tools.js';
import { Sandbox } from '../sandbox/sandbox.js';
import { PROCESS_TOOLS, sandboxedMcpServers, type ToolRun, toolRun } from './run-sandbox.js';

export type { RuntimeEvent } from './runtime-events.js';
export type { ResumedSession, SessionOutcome } from './session-log.js';
export { sessionLine } from './session-log.js';

/** Everything a run reports: the current agent's events and the runtime's own. */
export type RunEvent = AgentEvent | RuntimeEvent;

/** The optional ConnectionSettings, cleared before another connection is put in. */
const NO_CONNECTION = {
  providerName: undefined,
  contextSize: undefined,
  autocompactPct: undefined,
  rateTokensPerSec: undefined,
  rateBurst: undefined,
  disableParallelToolCalls: undefined,
  maxTokens: undefined,
  reasoningEffort: undefined,
} satisfies Partial<ConnectionSettings>;

/** How long a resumed run waits for the probe's context size before going on without it. */
const RESUME_PROBE_WAIT_MS = 5000;
/** How long a tool call, or the end of the run, waits for the sandbox check (a bwrap that hangs). */
const CHECK_WAIT_MS = 10_000;

/** `p`, or undefined after `ms`. */
const within = <T>(p: Promise<T> | null, ms: number): Promise<T | undefined> =>
  Promise.race([p ?? undefined, new Promise<undefined>((r) => setTimeout(() => r(undefined), ms).unref())]);

export { CliError };

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
  /** The current profile's sandbox (policy, mode in force). */
  readonly sandbox: Sandbox;
  /** How a call of tool `name` would run: the mode, and the text the permission question shows. */
  toolRun(name: string): ToolRun;
  /** Every registered tool (offered or refused by the policy): where it comes from and how a call would be decided. */
  toolList(): ToolView[];
  /** The MCP servers of the current agent. */
  mcpServers(): McpServerView[];
  /** Connect to the MCP server `name` again; throws when there is no such server. */
  reconnectMcp(name: string): Promise<McpServerView>;
  /** `/mcp login NAME`: ToolSources.loginMcp. */
  loginMcp(name: string, say: (text: string) => void): Promise<McpServerView>;
  /** The project instructions of the current agent (AGENTS.md files), null when `agents_md = false`. */
  readonly instructions: ProjectInstructions | null;
  /**
   * Start a turn with a prompt the person wrote: the project instructions are looked at again
   * (a changed file is read into the system prompt first), a prompt command (`/NAME args`)
   * becomes its text, and the files its `@path` mentions are attached (notices say what was cut
   * or left out). Throws as agent.submit does, or when a prompt command's file cannot be read.
   */
  submit(prompt: string): void;
  /** The tokens (and, where priced, dollars) of this run's turns, as the servers reported them. */
  readonly usage: UsageLedger;
  /** The prompt commands (`commands/*.md` of the config directory and the workspace's `.clm/commands/`), as they are now. */
  promptCommands(): PromptCommand[];
  /** The run's secrets: everything shown or written is masked with them (a front end masks its own text with them too). */
  readonly secrets: Secrets;
  /** The permission desk: decides every tool call, asks the person through the front end that took it. */
  readonly desk: PermissionDesk;
  /** Every event from now on, across agent switches, masked and in `view` (default 'data'); returns the function that stops it. */
  subscribe(fn: (e: RunEvent) => void, view?: EventView): () => void;
  /** A fresh session file from here on; the old one is deleted when it holds no conversation. */
  rotateSession(): Session | null;
  /** Go on in a copy of the session under a new id; the original stays as it was. Throws an Error saying why not. */
  forkSession(): { from: string; to: string };
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
  connectionFor(flags: ConnectionFlags): ConnectionSettings;
  /** Move the current agent to another connection (model, endpoint, dialect, key, limits); the history is kept. */
  setConnection(conn: ConnectionSettings): void;
  /** The session's checkpoints: what turns changed, and taking turns back. */
  readonly checkpoints: RunCheckpoints;
  /** A run that looked for a local server (no -u, no provider): every local server that answers now; else null. */
  localServers(): Promise<LocalServer[]> | null;
  /**
   * Start what waited for the first request: the sandbox check and the connection probe. A front
   * end that draws (the UI) calls it once its first frame is on screen; else it starts when
   * `ready` resolves, or at the first model request if that comes sooner.
   */
  startDeferred(): void;
  /** Close everything; whether the session file was kept and what it lacks (sessionLine says it). */
  close(): Promise<SessionOutcome>;
  /**
   * Close the session file now, synchronously (an exit path that cannot wait for close(): a
   * crash, a signal); an empty one is deleted. Whether it was kept; close() later says the same.
   */
  closeSessionNow(): SessionOutcome;
}

/** A tool as `/tools` lists it. */
export interface ToolView {
  name: string;
  /** `builtin`, `plugin FILE`, `mcp server NAME`. */
  origin: string;
  /** Whether the model is offered it (the policy hides refused tools). */
  offered: boolean;
  /** How a call would be decided: the permission engine's ruling over the tool's calls. */
  decision: ToolRuling;
}

export interface RuntimeOptions {
  args: CliArgs;
  /** Every event of the run from the start (configuration warnings included), masked and in `view`. */
  onEvent(e: RunEvent): void;
  /** How the front end shows text (default 'data': json and stream-json). */
  view?: EventView;
  /** The list to fill with the run's secrets (the front end masks what it shows of its own with it); a new one by default. */
  secrets?: Secrets;
  /** The front end that asks the person; absent: nobody is there (an asked call follows permissions.unattended). */
  asker?: DeskFront;
  env?: NodeJS.ProcessEnv;
  /** Resume this session id (already chosen). */
  resumeId?: string;
  /** The connection and settings are known (start-up goes on). */
  onResolved?(run: ResolvedRun): void;
  /** Compact at the end of a turn that leaves the context over the threshold (the interactive UI). */
  autocompactAtTurnEnd?: boolean;
  /** The workspace (default: the working directory): where the project instructions are looked for. */
  cwd?: string;
  /**
   * Awaited between steps of long start-up work (a resumed session's reading, before the tools'
   * start, the deferred work's starts): the front end answers keys meanwhile.
   */
  pause?: () => Promise<void>;
  /** The front end calls startDeferred() after its first frame; the runtime does not start that work when `ready` resolves. */
  startsDeferred?: boolean;
}

/** One agent with its tool sources; a switch of profile makes a new one. */
interface Generation {
  run: ResolvedRun;
  sandbox: Sandbox;
  /** The MCP servers that opted in to the sandbox. */
  mcpSandboxed: Set<string>;
  agent: Agent;
  sources: ToolSources;
  instructions: ProjectInstructions | null;
  probe: Promise<unknown>;
  /** The sandbox check, once started. */
  checking(): Promise<void> | null;
  /** Every tool name any source registered, to tell a policy pattern that matches nothing. */
  seen: Set<string>;
  /** The tools as their sources gave them (before the policy and masking), by name. */
  defs: Map<string, ToolDef>;
  detach(): void;
}

export async function createRuntime(o: RuntimeOptions): Promise<Runtime> {
  killToolGroupsOnExit();
  const env = o.env ?? process.env;
  const args = o.args;
  const secrets = o.secrets ?? new Secrets();
  if (env.CLM_API_KEY) secrets.add(env.CLM_API_KEY);
  const guard = new EventGuard(secrets);
  const subscribers = new Map<(e: RunEvent) => void, EventView>([[o.onEvent, o.view ?? 'data']]);
  const usage = new UsageLedger(() => ({ model: gen.agent.model, price: priceOf(gen.run.config, gen.run.providerName, gen.agent.model) }));
  const emit = (e: RunEvent) => {
    if (e.type === 'tool_sandbox') sessions.toolRun(e.id, e.name, e.mode);
    if (!isRuntimeEvent(e)) usage.event(e);
    for (const m of guard.pass(e)) for (const [s, view] of [...subscribers]) s(viewOf(m, view));
  };
  const notice = (text: string) => emit({ type: 'notice', text });
  const log = createDebugLog(env.CLM_DEBUG_LOG, { secrets });
  const firstRun = await resolveRun(args, env, log ?? undefined);
  secrets.add(firstRun.secrets);
  o.onResolved?.(firstRun);
  const noConfig = configDirWarning(env);
  if (noConfig) notice(noConfig);
  for (const w of firstRun.warnings) notice(w);
  const host = createNodeHost({ log: log ?? null });
  const { later, start: startDeferred, startAfter, checkpointsMayStart, openCheckpoints, agentHost } = deferredWork(host, o.pause);
  // How a call would run: the current profile's sandbox says (set as each agent starts).
  let runsOf = (_name: string): string | null => null;
  let readOnlyCommands = () => false;
  const policy: ToolPolicy = { allow: args.allowTools, deny: args.denyTools };
  const rulesFile = rulesFileOf(env);
  const fileRules = fileRulesOf(rulesFile);
  const desk = new PermissionDesk({
    engine: newEngine(firstRun, args, fileRules, env, () => readOnlyCommands()),
    rulesFile,
    unattended: firstRun.config?.permissions?.unattended,
    mask: (s) => secrets.mask(s),
    sandbox: (call) => runsOf(call.name),
    log: log ?? undefined,
    onDecided: (call, decided) => emit({ type: 'permission', id: call.id, name: call.name, decided }),
  });
  desk.front = o.asker ?? null;
  // A run that names no server looks for a local one, alongside the rest of start-up.
  let places: Place[] = [];
  const located =
    args.url === undefined && !firstRun.providerName
      ? locate(host, env, firstRun, notice, (p) => {
          places = p;
        })
      : null;
  // Every source's tools: how each call ran recorded, the policy, then the run's secrets masked in what they return.
  const wrapFor = (sb: Sandbox, mcp: Set<string>) => (d: ToolDef) => maskedTool(applyPolicy(policy, recordedRun(d, sb, mcp)), secrets);
  /** The process tools say how each call ran; the others run as their kind does. */
  const recordedRun = (d: ToolDef, sb: Sandbox, mcp: Set<string>): ToolDef =>
    PROCESS_TOOLS.has(d.name)
      ? d
      : {
          ...d,
          invoke: (inv) => {
            emit({ type: 'tool_sandbox', id: inv.id ?? '', name: d.name, mode: toolRun(sb, d.name, mcp).mode });
            return d.invoke(inv);
          },
        };
  /** Sandbox notices said (once each, also across profile switches). */
  const saidSandbox = new Set<string>();
  // The session meta names the profile asked for (-a, switchAgent), not the configured default.
  let profile = args.agent;
  const meta = (run: ResolvedRun) => ({ model: run.model, provider: run.providerName ?? run.provider, agent: profile });
  const sessions = await startSessionLog(
    { resumeId: o.resumeId, fork: args.fork, secrets, env, notice, meta: meta(firstRun), pause: o.pause },
    log,
  );
  let gen: Generation;
  const checkpoints = new RunCheckpoints({
    stateDir: stateDirOrNull(env),
    cwd: process.cwd(),
    settings: () => gen.run.checkpoints,
    sessions,
    env,
    notice,
    after: checkpointsMayStart,
  });

  let closed = false;
  let sessionClosed: SessionOutcome | null = null;
  const closeSession = (): SessionOutcome => (sessionClosed ??= sessions.close());

  const cwd = o.cwd ?? process.cwd();
  const start = (run: ResolvedRun): Generation => {
    const dirs = pluginDirs({ explicit: args.plugins, agentName: run.agentName, env, notice });
    const sandbox = new Sandbox({
      settings: run.sandbox,
      env,
      pluginDirs: dirs,
      secrets,
    });
    const mcpSandboxed = sandboxedMcpServers(run.mcpServers);
    sandbox.onRun = (id, name, mode) => emit({ type: 'tool_sandbox', id: id ?? '', name, mode });
    sandbox.askOutside = desk.askOutside;
    runsOf = (name) => toolRun(sandbox, name, mcpSandboxed).text;
    readOnlyCommands = () => readOnlyCommandsRun(run, sandbox);
    // Whether the configured mode can be had: said once, and shown where the mode is.
    const checking = sandboxCheck(sandbox, () => {
      if (closed) return;
      const n = sandbox.notice();
      if (n && !saidSandbox.has(n)) {
        saidSandbox.add(n);
        notice(n);
      }
      emit({ type: 'sandbox', mode: sandbox.inForce, runs: sandbox.runs() });
    });
    later(() => void checking.check());
    const wrap = wrapFor(sandbox, mcpSandboxed);
    const instructions =
      run.config?.agentsMd === false
        ? null
        : new ProjectInstructions({ cwd, configDir: configDir(env), home: env.HOME, maxBytes: run.config?.agentsMdMaxBytes });
    for (const p of instructions?.problems() ?? []) notice(p);
    const agent = createAgent(
      agentConfig(run, {
        stream: !args.noStream,
        builtinTools: builtinTools({ sandbox }).map(wrap),
        autocompactAtTurnEnd: o.autocompactAtTurnEnd,
        systemPrompt: withInstructions(baseSystemPrompt(run), instructions?.text ?? ''),
      }),
      agentHost,
      // No tool runs before the sandbox check is done (it decides how the tool runs).
      { permission: (call, signal) => within(checking.check(), CHECK_WAIT_MS).then(() => desk.hook(call, signal)) },
      { beforeChanges: checkpoints.beforeChanges },
    );
    const unsubscribe = [agent.subscribe(emit), sessions.follow(agent), checkpoints.follow(agent)];
    const seen = new Set(agent.toolNames);
    const defs = new Map(builtinTools().map((d) => [d.name, d]));
    const sources = startToolSources({
      run,
      args,
      env,
      dirs,
      sandbox,
      emit,
      log: log ?? undefined,
      secrets,
      reservedNames: builtinTools().map((t) => t.name),
      cacheDir: stateDirOrNull(env),
      target: {
        addTool: (d) => {
          agent.addTool(wrap(d));
          seen.add(d.name);
          defs.set(d.name, d);
        },
        removeTool: (n) => agent.removeTool(n),
      },
    });
    // Its answer (the context size) is used when it comes. A run still looking for its server
    // probes the one it finds.
    const probe = located && run === firstRun ? located : probeLater(agent);
    return {
      run,
      sandbox,
      mcpSandboxed,
      agent,
      sources,
      instructions,
      probe,
      checking: checking.started,
      seen,
      defs,
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

  /** The agent's connection probe, once the deferred work starts; resolves with its answer, or at once for a closed agent. */
  const probeLater = (agent: Agent): Promise<unknown> =>
    new Promise((resolve) =>
      later(() => {
        try {
          resolve(agent.checkConnection().catch(() => {}));
        } catch {
          resolve(undefined);
        }
      }),
    );

  // A front end that draws keys gets a turn of the event loop before the tools' start.
  await o.pause?.();
  gen = start(firstRun);
  let local: Located | null = null;
  // Before any request (every mode waits for `ready`), so the agent is idle; then the connection
  // is probed where the run now goes.
  const switched = located?.then((found) => {
    if (closed) return;
    local = found;
    if (found) {
      gen.run = onLocal(gen.run, found);
      gen.agent.setProvider(agentConfig(gen.run, { stream: !args.noStream, builtinTools: [] }));
    }
    gen.probe = probeLater(gen.agent);
  });
  const restored = sessions.resumed?.messages ?? [];
  if (restored.length) gen.agent.restoreHistory(restored);

  const ready = (async () => {
    const g = gen;
    await Promise.all([g.sources.ready, switched]);
    judgePolicy(g);
    sessions.open(meta(g.run));
    emit({ type: 'session', id: sessions.session?.id ?? null });
    // A resumed conversation may already be over the compaction threshold: fold it first rather
    // than send a request the server cannot take. That needs the context size, so here (only
    // here) the probe is waited for when the configuration does not give it.
    if (restored.length && !g.run.contextSize) {
      startDeferred();
      await Promise.race([g.probe, new Promise((r) => setTimeout(r, RESUME_PROBE_WAIT_MS).unref())]);
    }
    if (restored.length && g.agent.overAutocompactThreshold()) {
      notice(`the resumed conversation (~${g.agent.ctxUsed} tokens) is over the compaction threshold; compacting it first`);
      const r = await g.agent.compactAndWait('resume');
      // EAGAIN: nothing to fold, which the agent's own notice says.
      if (r.status !== 0 && r.status !== EAGAIN)
        notice(`compaction failed (${r.error ?? r.status}); continuing with the whole conversation`);
    }
    emit({ type: 'ready' });
  })();
  ready.catch(() => {
    /* the mode awaiting it reports the failure */
  });
  startAfter(ready, o.startsDeferred);

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
    secrets,
    usage,
    desk,
    checkpoints,
    resumed: sessions.resumed,
    ready,
    advertisedTools: () => advertised(policy, gen.agent.toolNames),
    get sandbox() {
      return gen.sandbox;
    },
    toolRun: (name) => toolRun(gen.sandbox, name, gen.mcpSandboxed),
    toolList: () => {
      const places = { home: env.HOME, seedDir: packageRoot() && seedPluginDir() };
      return gen.agent.toolNames.map((name) => {
        const gated = !gen.defs.get(name)?.noPrompt;
        const origin = originText(gen.sources.origin(name), places);
        return { name, origin, offered: policyRefusal(policy, name) === null, decision: desk.engine.toolRuling(name, gated) };
      });
    },
    mcpServers: () => gen.sources.mcpServers(),
    reconnectMcp: (name) => gen.sources.reconnectMcp(name),
    loginMcp: (name, say) => gen.sources.loginMcp(name, say),
    get instructions() {
      return gen.instructions;
    },
    submit: (prompt) => {
      const g = gen;
      if (g.agent.busy) return g.agent.submit(prompt); // EBUSY, as ever
      if (g.instructions?.refresh()) {
        const now = g.instructions.summary();
        notice(`project instructions changed; ${now ? `in use now: ${now}` : 'none in use now'}`);
        for (const p of g.instructions.problems()) notice(p);
        g.agent.setSystemPrompt(withInstructions(baseSystemPrompt(g.run), g.instructions.text));
      }
      const command = expandPromptCommand(prompt, { configDir: configDir(env), cwd });
      const m = attachMentions(command?.text ?? prompt, { cwd, home: env.HOME, mask: (t) => secrets.mask(t) });
      if (m.attached.length) notice(`attached ${m.attached.join(', ')}`);
      for (const n of m.notices) notice(n);
      g.agent.submit(m.text);
    },
    promptCommands: () => promptCommands({ configDir: configDir(env), cwd }),
    subscribe: (fn, view = 'data') => {
      subscribers.set(fn, view);
      return () => {
        subscribers.delete(fn);
      };
    },
    rotateSession: () => {
      const s = sessions.rotate(meta(gen.run));
      emit({ type: 'session', id: s?.id ?? null });
      return s;
    },
    forkSession: () => {
      const ids = sessions.fork();
      emit({ type: 'session', id: ids.to });
      return ids;
    },
    switchAgent: async (name, so = {}) => {
      if (gen.agent.busy) throw new CliError('busy; try again when idle', 1);
      let run = await resolveRun({ ...args, agent: name }, env, log ?? undefined);
      if (local && args.url === undefined && !run.providerName) run = onLocal(run, local);
      secrets.add(run.secrets);
      for (const w of run.warnings) notice(w);
      const history = so.keepHistory ? gen.agent.messages : [];
      const rules = runRules(run, args, fileRules);
      await stop(gen);
      desk.engine.setRules(rules);
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
      secrets.add(conn.secrets);
    },
    close: async () => {
      // A check still running says what it found first (its notice belongs to the run).
      await within(gen.checking(), CHECK_WAIT_MS);
      closed = true;
      // Checkpoint records still to be written (a run that ends before its first request).
      openCheckpoints();
      gen.agent.close();
      await Promise.allSettled([gen.sources.close(), stopBackgroundJobs(), checkpoints.close()]);
      gen.detach();
      host.close();
      return closeSession();
    },
    closeSessionNow: () => closeSession(),
    startDeferred,
    localServers: () => (located && places.length ? import('./local-servers.js').then((m) => m.findLocalServers(host, places).all) : null),
  };
}

/** The run's session log; the debug log says when a resumed session's reading starts and ends. */
async function startSessionLog(o: SessionLogOptions, log: DebugLog | undefined): Promise<SessionLog> {
  if (o.resumeId !== undefined) log?.(`session: reading ${o.resumeId}`);
  const sessions = await SessionLog.start(o);
  if (sessions.resumed) log?.(`session: ${sessions.resumed.id} read: ${sessions.resumed.transcript.length} messages`);
  return sessions;
}

/** The work that can wait (see the top of this file), started once; `agentHost` starts it beside the first model request. */
function deferredWork(host: Host, pause: (() => Promise<void>) | undefined) {
  const waiting: (() => void)[] = [];
  let started = false;
  let openCheckpoints!: () => void;
  const checkpointsMayStart = new Promise<void>((r) => {
    openCheckpoints = r;
  });
  const start = () => {
    if (started) return;
    started = true;
    openCheckpoints();
    const jobs = waiting.splice(0);
    // Each job's start (a child process spawned, a request made) in a turn of its own for a front end that draws keys meanwhile.
    if (pause)
      void (async () => {
        for (const f of jobs) {
          await pause();
          f();
        }
      })();
    else for (const f of jobs) f();
  };
  // After this turn of the event loop, so the request goes out first.
  const agentHost: Host = {
    ...host,
    http: (req, h) => {
      const c = host.http(req, h);
      if (req.body !== undefined && !started) setImmediate(start);
      return c;
    },
  };
  return {
    later: (f: () => void) => (started ? f() : waiting.push(f)),
    start,
    /** Start once `ready` settled (after that turn of the event loop: the front end's own work first), unless the front end starts it. */
    startAfter: (ready: Promise<void>, byFrontEnd = false) => {
      if (!byFrontEnd) void ready.then(() => setImmediate(start), start);
    },
    checkpointsMayStart,
    openCheckpoints,
    agentHost,
  };
}

/** The sandbox's availability check, started at the first check(); `found` when it is done. */
function sandboxCheck(sandbox: Sandbox, found: () => void): { check(): Promise<void>; started(): Promise<void> | null } {
  let p: Promise<void> | null = null;
  return { check: () => (p ??= sandbox.check().then(found)), started: () => p };
}

/** `run` on the local server found: its URL, the model (the one asked for, else the server's), the context size it said. */
function onLocal(run: ResolvedRun, found: Located): ResolvedRun {
  const base = found.server.base;
  const model = run.model === DEFAULT_MODEL ? found.model : run.model;
  const out: ResolvedRun = { ...run, base, baseUrl: `${base}/chat/completions`, provider: 'openai', model };
  if (model === found.model && found.limits.contextSize) out.contextSize = found.limits.contextSize;
  return out;
}

/** Find the local server a run uses (local-servers.ts, loaded only by a run that looks), and say which, or where it looked. */
async function locate(
  host: NodeHost,
  env: NodeJS.ProcessEnv,
  run: ResolvedRun,
  notice: (text: string) => void,
  looked: (places: Place[]) => void,
): Promise<Located | null> {
  const m = await import('./local-servers.js');
  let places: Place[];
  try {
    places = m.placesFrom(env.CLM_LOCAL_SERVERS);
  } catch (e) {
    notice((e as Error).message);
    places = [...m.DEFAULT_PLACES];
  }
  looked(places);
  const found = places.length ? await m.locateServer(host, places, run.model === DEFAULT_MODEL ? undefined : run.model) : null;
  notice(found ? m.usingText(found) : m.noneText(places));
  return found;
}

function stateDirOrNull(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return sessionDir({ env });
  } catch {
    return undefined;
  }
}

export type { ProviderKind };
