// The run's session log: a resumed session reopened for appending (and what it restored), or a
// fresh file created once start-up is over (so a run interrupted while starting leaves no empty
// session behind). Every message and compaction of the agent is written with the run's secrets
// masked; the first write failure is reported once and logging stops (and what the file then
// lacks is counted, so the exit line can say so instead of offering to resume it). rotate()
// starts a fresh file, deleting the old one if it holds no conversation. A resumed file's
// damaged lines are reported.

import type { Agent } from '../core/agent.js';
import { mapReasoningText } from '../core/reasoning.js';
import type { AssistantMessage, CompactionRecord, Message } from '../core/types.js';
import { maskSecrets } from '../host/redact.js';
import { createSession, loadSession, openSession, type Session } from '../session/index.js';

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
  meta: SessionMetaFields;
  /** Values never written (secrets.lua values, API keys), even when a tool printed one. */
  secrets: readonly string[];
  env: NodeJS.ProcessEnv;
  notice(text: string): void;
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
  private closed = false;

  private readonly secrets: string[];

  constructor(private readonly o: SessionLogOptions) {
    this.meta = o.meta;
    this.secrets = [...o.secrets];
    if (o.resumeId !== undefined) {
      const loaded = loadSession(o.resumeId, { env: o.env });
      this.resumed = { id: o.resumeId, messages: loaded.messages, transcript: loaded.transcript };
      const n = loaded.skipped;
      if (n)
        o.notice(
          `session ${o.resumeId}: ${n} damaged ${n === 1 ? 'line was' : 'lines were'} skipped; ${n === 1 ? 'its content is' : 'their content is'} not restored`,
        );
      this.file = openSession(o.resumeId, { env: o.env });
    }
  }

  /** The open session file, if any. */
  get session(): Session | null {
    return this.file;
  }

  /** Create the fresh session file, unless one is open already (resumed, or opened before). */
  open(): void {
    if (this.file || this.closed) return;
    try {
      this.file = createSession({ ...this.meta, env: this.o.env });
      this.failed = false;
    } catch (e) {
      this.failed = true;
      this.o.notice(`session logging disabled: ${(e as Error).message}`);
    }
  }

  /** Log the agent's messages and compactions from now on; returns the function that stops it. */
  follow(agent: Agent): () => void {
    return agent.subscribe((e) => {
      if (e.type === 'message') this.write((s) => s.append(maskMessage(e.message, this.secrets)));
      else if (e.type === 'compaction' && e.phase === 'succeeded')
        this.write((s) => s.appendCompaction(maskRecord(e.record, this.secrets)));
    });
  }

  /** One more value never to write (the secrets of a profile switched to). */
  addSecret(s: string): void {
    if (s && !this.secrets.includes(s)) this.secrets.push(s);
  }

  /** A fresh session file for what follows (a cleared conversation, another profile); the old one is closed, and deleted when empty. */
  rotate(meta: SessionMetaFields = this.meta): Session | null {
    this.meta = meta;
    const old = this.file;
    this.file = null;
    this.failed = false;
    this.failure = null;
    old?.close();
    this.open();
    return this.file;
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

function maskMessage(m: Message, secrets: readonly string[]): Message {
  if (!secrets.length) return m;
  const content = m.content === null ? null : maskSecrets(m.content, secrets);
  if (m.role !== 'assistant') return { ...m, content };
  const out: AssistantMessage = { ...m, content };
  if (m.toolCalls) out.toolCalls = m.toolCalls.map((c) => ({ ...c, args: maskSecrets(c.args, secrets) }));
  if (m.reasoning) {
    // Signed thinking that holds a secret is left out (masked, it would not match its signature);
    // encrypted data is not readable and stays.
    const parts = m.reasoning.flatMap((p) => mapReasoningText(p, (t) => maskSecrets(t, secrets)) ?? []);
    if (parts.length) out.reasoning = parts;
    else delete out.reasoning;
  }
  return out;
}

function maskRecord(c: CompactionRecord, secrets: readonly string[]): CompactionRecord {
  return { ...c, summary: maskSecrets(c.summary, secrets) };
}
