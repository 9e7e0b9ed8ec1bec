// The run's session log: a resumed session reopened for appending (and what it restored), or a
// fresh file created once start-up is over (so a run interrupted while starting leaves no empty
// session behind). Every message and compaction of the agent is written with the run's secrets
// masked; the first write failure is reported once and logging stops (and what the file then
// lacks is counted, so the exit line can say so instead of offering to resume it). rotate()
// starts a fresh file, deleting the old one if it holds no conversation. A resumed file's
// damaged lines are reported.

import type { Agent } from '../core/agent.js';
import type { Message } from '../core/types.js';
import type { Secrets } from '../host/redact.js';
import {
  createSession,
  forkSession,
  type LoadedSession,
  loadSession,
  loadSessionInSteps,
  openSession,
  type Session,
} from '../session/index.js';
import { maskMessage, maskRecord } from './guard.js';

/** What a resumed session brought back. */
export interface ResumedSession {
  id: string;
  /** The conversation as the agent continues it (compactions replayed). */
  messages: Message[];
  /** Every message as logged, compactions not applied: the whole conversation, for replay on screen. */
  transcript: Message[];
}

export interface SessionMetaFields {
  model?: string;
  provider?: string;
  agent?: string;
}

export interface SessionLogOptions {
  /** Resume this session id (already chosen). */
  resumeId?: string;
  /** Resume a copy of it under a new id instead (`--fork`): the original stays as it was. */
  fork?: boolean;
  meta: SessionMetaFields;
  /** The run's secrets (secrets.lua values, API keys): never written, even when a tool printed one. */
  secrets: Secrets;
  env: NodeJS.ProcessEnv;
  notice(text: string): void;
  /** Awaited between steps of reading a long session (a front end answers keys meanwhile); absent: read in one piece. */
  pause?: () => Promise<void>;
}

/** How the session file ended up: kept or not, and what it lacks when writing it failed. */
export interface SessionOutcome {
  sessionKept: boolean;
  /** Entries (messages, compactions) not written after a write failed, and why it failed. */
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

export class SessionLog {
  readonly resumed: ResumedSession | null = null;
  private file: Session | null = null;
  private meta: SessionMetaFields;
  /** A write failed (or the file could not be created): nothing more is written to this file. */
  private failed = false;
  /** The write failure of the open file, and the entries lost since. */
  private failure: { lost: number; error: string } | null = null;
  /** Why the last session file could not be created (the notice said so). */
  private openFailure: string | null = null;
  private closed = false;
  /** Messages of the conversation the file holds now (a rewind line counts it back). */
  private count = 0;

  /** A log that resumes `o.resumeId` (read and reopened), or that creates a fresh file when open() is called. */
  static async start(o: SessionLogOptions): Promise<SessionLog> {
    if (o.resumeId === undefined) return new SessionLog(o, null);
    let id = o.resumeId;
    if (o.fork) {
      id = forkSession(o.resumeId, { env: o.env });
      o.notice(`forked session ${o.resumeId} as ${id}; ${o.resumeId} stays as it was`);
    }
    const pause = o.pause;
    return new SessionLog(o, { id, loaded: pause ? await loadSessionInSteps(id, { env: o.env, pause }) : loadSession(id, { env: o.env }) });
  }

  constructor(
    private readonly o: SessionLogOptions,
    resume: { id: string; loaded: LoadedSession } | null = null,
  ) {
    this.meta = o.meta;
    if (resume) {
      const { id, loaded } = resume;
      this.resumed = { id, messages: loaded.messages, transcript: loaded.transcript };
      const n = loaded.skipped;
      if (n)
        o.notice(
          `session ${id}: ${n} damaged ${n === 1 ? 'line was' : 'lines were'} skipped; ${n === 1 ? 'its content is' : 'their content is'} not restored`,
        );
      this.file = openSession(id, { env: o.env });
      this.count = loaded.transcript.length;
    }
  }

  /** How many messages the conversation holds as the file has it (what a rewind line counts). */
  get messageCount(): number {
    return this.count;
  }

  /** The open session file, if any. */
  get session(): Session | null {
    return this.file;
  }

  /** Create the fresh session file, unless one is open already (resumed, or opened before); `meta`: the run's as it now is. */
  open(meta: SessionMetaFields = this.meta): void {
    this.meta = meta;
    if (this.file || this.closed) return;
    try {
      this.file = createSession({ ...this.meta, env: this.o.env });
      this.failed = false;
    } catch (e) {
      this.failed = true;
      // Said once: a directory that cannot take a session now will not take the next one (/clear).
      const text = `session logging disabled: ${(e as Error).message}`;
      if (text !== this.openFailure) this.o.notice(text);
      this.openFailure = text;
    }
  }

  /** Log the agent's messages and compactions from now on; returns the function that stops it. */
  follow(agent: Agent): () => void {
    return agent.subscribe((e) => {
      if (e.type === 'message') {
        if (e.message.role !== 'system') this.count++;
        this.write((s) => s.append(maskMessage(e.message, this.o.secrets)));
      } else if (e.type === 'compaction' && e.phase === 'succeeded')
        this.write((s) => s.appendCompaction(maskRecord(e.record, this.o.secrets)));
    });
  }

  /** The conversation went back to `messages` messages: the file says so (see session/format.ts). */
  rewind(messages: number): void {
    this.count = messages;
    this.write((s) => s.appendRewind(messages));
  }

  /** Record how a tool call ran. */
  toolRun(id: string, tool: string, sandbox: string): void {
    this.write((s) => s.appendToolRun({ id, tool, sandbox }));
  }

  /** A fresh session file for what follows (a cleared conversation, another profile); the old one is closed, and deleted when empty. */
  rotate(meta: SessionMetaFields = this.meta): Session | null {
    this.meta = meta;
    const old = this.file;
    this.file = null;
    this.failed = false;
    this.failure = null;
    this.count = 0;
    old?.close();
    this.open();
    return this.file;
  }

  /**
   * Go on in a copy of the session under a new id (`/fork`): the file so far is closed and kept as
   * it is, the copy opened for what follows. The ids, or an Error saying why not.
   */
  fork(): { from: string; to: string } {
    const old = this.file;
    if (!old) throw new Error(this.openFailure ?? 'there is no session file to fork');
    if (this.failed) throw new Error(`session ${old.id} is incomplete (writing it failed); it cannot be forked`);
    if (old.isEmpty) throw new Error('nothing to fork yet: the conversation is empty');
    const to = forkSession(old.id, { env: this.o.env });
    old.close();
    this.file = openSession(to, { env: this.o.env });
    return { from: old.id, to };
  }

  /** Close the file; whether it was kept (a session without conversation is deleted) and what it lacks. */
  close(): SessionOutcome {
    this.closed = true;
    let kept = false;
    try {
      kept = this.file ? this.file.close() : false;
    } catch (e) {
      this.o.notice(`closing the session failed: ${(e as Error).message}`);
    }
    return this.failure ? { sessionKept: kept, incomplete: { ...this.failure } } : { sessionKept: kept };
  }

  private write(w: (s: Session) => void): void {
    if (!this.file) return;
    if (this.failed) {
      if (this.failure) this.failure.lost++;
      return;
    }
    try {
      w(this.file);
    } catch (e) {
      this.failed = true;
      const cause = (e as { cause?: NodeJS.ErrnoException }).cause;
      this.failure = { lost: 1, error: cause?.code ? `${cause.code}: ${errnoMessage(cause)}` : (e as Error).message };
      this.o.notice(`session logging failed; disabled (${(e as Error).message})`);
    }
  }
}

/** "no space left on device" from "ENOSPC: no space left on device, write". */
function errnoMessage(e: NodeJS.ErrnoException): string {
  return e.message.replace(/^[A-Z0-9]+: /, '').replace(/, \w+$/, '');
}
