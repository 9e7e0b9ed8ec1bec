// The run's checkpoints: the agent's turns recorded for the current session (where the
// conversation stood, the workspace before the first tool that may change files and after the
// turn), and taking turns back — the files through src/checkpoints, the conversation through
// the agent's history and a rewind line in the session file. The checkpoints module loads on
// the first turn once its request is on its way (RunCheckpointsOptions.after), not at start-up,
// and the session's first snapshot starts then, in the background (Checkpoints.warm).

import type { Agent } from '../core/agent.js';
import type { AgentEvent } from '../core/events.js';
import type { Message } from '../core/types.js';
import type { CheckpointsConfig } from '../config/types.js';
import { loadSession } from '../session/index.js';
import type { Checkpoints, RestoreResult, Rewind, TurnDiff, TurnRecord } from '../checkpoints/index.js';
import type { SessionLog } from './session-log.js';

type Module = typeof import('../checkpoints/index.js');

export interface RewindChoice {
  files: boolean;
  conversation: boolean;
  /** Overwrite files changed outside clm since the checkpoint too. */
  overwrite: boolean;
}

export interface RewindOutcome {
  /** What happened to the files (null: they were not asked for, or no turn changed any). */
  files: RestoreResult | null;
  /** The conversation as it is now, when it went back. */
  conversation: Message[] | null;
}

export interface RunCheckpointsOptions {
  /** clm's state directory; undefined: no checkpoints (neither XDG_STATE_HOME nor HOME). */
  stateDir: string | undefined;
  /** The directory clm was started in. */
  cwd: string;
  settings(): CheckpointsConfig | undefined;
  sessions: SessionLog;
  env: NodeJS.ProcessEnv;
  notice(text: string): void;
  /** Nothing is recorded before this settles (the run's first request is on its way); default at once. */
  after?: Promise<void>;
}

/** How long a turn runs before the session's first snapshot starts in the background. */
const WARM_AFTER_MS = 500;
/**
 * How many turns keep the conversation before them in memory: each is a copy of the history,
 * so keeping every turn's grew a long session by its whole history per turn. An older turn's
 * conversation comes from the session file, which holds it too.
 */
const KEEP_BEFORE = 16;

export class RunCheckpoints {
  readonly #o: RunCheckpointsOptions;
  #mod: Promise<Module> | null = null;
  #cp: Checkpoints | null = null;
  /** What the records do next, in order (a turn's start, its snapshots, its end). */
  #chain: Promise<unknown> = Promise.resolve();
  #warmTimer: ReturnType<typeof setTimeout> | undefined;
  /** The conversation before each of this process's last KEEP_BEFORE turns, by turn number. */
  readonly #before = new Map<number, Message[]>();
  #unsaved = `unsaved-${process.pid}-${Date.now().toString(36)}`;

  constructor(o: RunCheckpointsOptions) {
    this.#o = o;
    if (o.after) this.#chain = o.after;
  }

  #module(): Promise<Module> {
    this.#mod ??= import('../checkpoints/index.js');
    return this.#mod;
  }

  #then(f: () => unknown): Promise<void> {
    const next = this.#chain.then(f);
    this.#chain = next.catch((e: unknown) => this.#o.notice(`checkpoint failed: ${(e as Error)?.message ?? String(e)}`));
    return this.#chain as Promise<void>;
  }

  /** The Checkpoints of the current session, made on first use. */
  async #current(): Promise<Checkpoints | null> {
    const stateDir = this.#o.stateDir;
    if (!stateDir) return null;
    const id = this.#o.sessions.session?.id ?? this.#unsaved;
    if (this.#cp?.sessionId === id) return this.#cp;
    const m = await this.#module();
    const old = this.#cp;
    void old?.close();
    const s = this.#o.settings() ?? {};
    this.#cp =
      m.Checkpoints.open(stateDir, id, s, this.#o.notice) ??
      new m.Checkpoints({
        stateDir,
        sessionId: id,
        workspace: m.workspaceRoot(this.#o.cwd),
        settings: s,
        notice: this.#o.notice,
      });
    this.#before.clear();
    return this.#cp;
  }

  /** Follow an agent's turns; returns the function that stops it. */
  follow(agent: Agent): () => void {
    return agent.subscribe((e: AgentEvent) => {
      if (e.type === 'turn_start' && (e.origin === 'submit' || e.origin === 'notify')) {
        // Where the conversation stands now, before the turn's first message.
        const history = agent.messages;
        const count = this.#o.sessions.messageCount;
        const prompt = e.prompt ?? '';
        void this.#then(async () => {
          const cp = await this.#current();
          if (!cp) return;
          cp.beginTurn(prompt, count);
          this.#before.set(cp.turns.at(-1)!.turn, history);
          for (const n of this.#before.keys()) if (this.#before.size > KEEP_BEFORE) this.#before.delete(n);
          // The session's first snapshot runs while the model answers, not when its first tool
          // waits; not at once, so that a quick answer without tools (a one-shot question) never pays it.
          this.#warmTimer = setTimeout(() => void cp.warm(), WARM_AFTER_MS);
          this.#warmTimer.unref();
        });
      } else if (e.type === 'turn_done') {
        void this.#then(async () => {
          clearTimeout(this.#warmTimer);
          await this.#cp?.endTurn();
        });
      }
    });
  }

  /** AgentOptions.beforeChanges: the workspace before the turn's first tool that may change files. */
  readonly beforeChanges = async (): Promise<void> => {
    await this.#chain;
    await this.#cp?.beforeChanges();
  };

  /** Everything recorded so far is written (a one-shot run's result names its checkpoint after this). */
  settled(): Promise<void> {
    return this.#then(() => {});
  }

  /** The current session's turns, oldest first. */
  async turns(): Promise<readonly TurnRecord[]> {
    await this.settled();
    return (await this.#current())?.turns ?? [];
  }

  /** Why file snapshots are off, or null. */
  async off(): Promise<string | null> {
    return (await this.#current())?.off ?? (this.#o.stateDir ? null : 'no state directory (neither XDG_STATE_HOME nor HOME is set)');
  }

  async diff(turn?: number): Promise<TurnDiff> {
    const cp = await this.#need();
    return cp.diff(turn);
  }

  /** What going back to before `turn` would do. */
  async plan(turn: number): Promise<Rewind> {
    const cp = await this.#need();
    return cp.plan(turn);
  }

  /** Take the turns of `r` back: the files, the conversation, or both; the agent must be idle. */
  async rewind(r: Rewind, agent: Agent, c: RewindChoice): Promise<RewindOutcome> {
    const cp = await this.#need();
    if (agent.busy) throw new Error('busy; try again when idle');
    const files = c.files && r.files ? await cp.apply(r, { overwrite: c.overwrite }) : null;
    let conversation: Message[] | null = null;
    if (c.conversation) {
      const sessions = this.#o.sessions;
      sessions.rewind(r.from.messages);
      const kept = this.#before.get(r.from.turn);
      const id = sessions.session?.id;
      conversation = (kept ?? (id ? loadSession(id, { env: this.#o.env }).messages : [])).filter((m) => m.role !== 'system');
      agent.clearHistory();
      agent.restoreHistory(conversation);
    }
    cp.forget(r.from.turn);
    for (const n of [...this.#before.keys()]) if (n >= r.from.turn) this.#before.delete(n);
    return { files, conversation };
  }

  async #need(): Promise<Checkpoints> {
    await this.settled();
    const cp = await this.#current();
    if (!cp) throw new Error('checkpoints need a state directory (neither XDG_STATE_HOME nor HOME is set)');
    return cp;
  }

  /** The run ends: what is pending written, the shadow repository pruned to its cap. */
  async close(): Promise<void> {
    clearTimeout(this.#warmTimer);
    await this.settled();
    await this.#cp?.close();
  }
}
