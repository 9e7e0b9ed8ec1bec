// Headless REPL (-H, or stdin/stdout not a terminal): `user> ` prompts, streamed `assistant> `
// replies, tool and usage lines (repl-output.ts). Every input line is processed in order (lines
// typed or piped while a turn runs wait their turn); quit, exit or EOF end the session after the
// last turn. Every tool call goes through the permission desk; with a person at a terminal (stdin
// a TTY) a call the rules ask about runs only after they allow it (permission-terminal.ts); with
// piped input nobody is asked and permissions.unattended decides.

import { createInterface, emitKeypressEvents, type Interface } from 'node:readline';
import { ClmError } from '../core/errors.js';
import type { AgentEvent } from '../core/events.js';
import { forTerminal } from '../core/terminal-text.js';
import { listSessions } from '../session/index.js';
import type { CliArgs } from './args.js';
import { Secrets } from '../host/redact.js';
import { type Key, TerminalAsker } from './permission-terminal.js';
import { discardTypeAhead } from './type-ahead.js';
import { hideResumeCompaction, type Out } from './render.js';
import { ReplOutput } from './repl-output.js';
import { createRuntime, sessionLine, type RunEvent, type Runtime } from './runtime.js';
import { isRuntimeEvent } from './runtime-events.js';
import { onInterrupt } from './signal-handlers.js';
import { chooseSession } from './resume-picker.js';
import { startIsDone } from './code-cache.js';

export interface ReplIo {
  stdin: NodeJS.ReadableStream;
  stdout: Out;
  stderr: Out;
  color: boolean;
}

export function runRepl(args: CliArgs, io: ReplIo): Promise<number> {
  return new Repl(args, io).run();
}

/** The keys a permission question took from the line reader, and what to give back to it after. */
interface TakenKeys {
  handler: (s: string | undefined, k: Key | undefined) => void;
  history: string[];
  pending: string;
}

class Repl {
  /** On a terminal, readline edits the line (arrows, history, Ctrl-A/E/U…); piped input is read raw. */
  private readonly stdinTty: boolean;
  private readonly tty: boolean;
  private readonly out: ReplOutput;
  /** The runtime's events come with secrets masked; the REPL's own text is masked with the same list. */
  private readonly secrets = new Secrets();
  private rt: Runtime | null = null;

  /** Lines read and not yet processed. */
  private readonly lines: string[] = [];
  private eof = false;
  /** Set by Ctrl-C at the prompt, or by output nobody reads: no further input is processed. */
  private stopped = false;
  private wake: (() => void) | null = null;
  /** The main loop waits at `user> ` (not for a turn). */
  private atPrompt = false;
  /**
   * The line reader. A permission question takes the keys for itself: the reader is closed
   * (keeping its history and any half-typed line) and opened again after the answer.
   */
  private rl!: Interface;
  private suspended = false;
  private keys: TakenKeys | null = null;
  private turnEnded: (() => void) | null = null;
  /** Ctrl-C ended the REPL (exit status 130). */
  private interrupted = false;

  constructor(
    private readonly args: CliArgs,
    private readonly io: ReplIo,
  ) {
    this.stdinTty = !!(io.stdin as { isTTY?: boolean }).isTTY;
    this.tty = this.stdinTty && !!(io.stdout as { isTTY?: boolean }).isTTY;
    this.out = new ReplOutput(io.stdout, io.stderr, io.color);
  }

  async run(): Promise<number> {
    this.openReader();
    const resumeId = this.args.resume === '' ? await this.chooseResume() : this.args.resume || undefined;
    const asker = this.asker();
    const rt = await createRuntime({
      args: this.args,
      onEvent: hideResumeCompaction((e: RunEvent) => {
        if (!isRuntimeEvent(e)) this.event(e);
      }),
      view: 'terminal',
      secrets: this.secrets,
      ...(asker ? { asker } : {}),
      resumeId,
    });
    this.rt = rt;
    await rt.ready;
    this.greet(rt, resumeId);
    startIsDone();
    onInterrupt(() => this.interrupt(rt));
    // The reader of our output went away (`clm -H < prompts | head`), or the output cannot be
    // written at all: stop after the current turn instead of running every remaining line (and
    // its tools) for nobody.
    const stdout = this.io.stdout as { on?(ev: 'error', fn: (e: NodeJS.ErrnoException) => void): unknown };
    stdout.on?.('error', () => {
      this.stopped = true;
      this.cancel(rt);
      this.wake?.();
    });
    await this.loop(rt);
    onInterrupt(null);
    this.rl.close();
    const line = sessionLine(rt.session, await rt.close());
    if (line) this.io.stderr.write(line);
    return this.interrupted ? 130 : 0;
  }

  private clean(t: string): string {
    return forTerminal(this.secrets.mask(t));
  }

  // ---- input -------------------------------------------------------------------------------

  private openReader(history: string[] = [], pending = ''): void {
    const rl = createInterface({
      input: this.io.stdin,
      output: this.tty ? (this.io.stdout as NodeJS.WritableStream) : undefined,
      terminal: this.tty,
      crlfDelay: Infinity,
      historySize: 500,
      history,
    });
    this.rl = rl;
    // With terminal editing, readline turns Ctrl-C into its own event: route it to ours.
    rl.on('SIGINT', () => {
      process.emit('SIGINT' as never);
    });
    rl.on('line', (l) => {
      this.lines.push(l);
      this.wake?.();
    });
    rl.on('close', () => {
      if (this.suspended) return;
      this.eof = true;
      this.wake?.();
    });
    if (this.atPrompt && this.tty) {
      rl.setPrompt('user> ');
      rl.prompt();
    }
    if (pending) rl.write(pending);
  }

  private async nextLine(): Promise<string | null> {
    while (!this.lines.length && !this.eof && !this.stopped)
      await new Promise<void>((r) => {
        this.wake = r;
      });
    this.wake = null;
    return this.lines.length && !this.stopped ? this.lines.shift()! : null;
  }

  /** `-r` without an id: the sessions listed, one chosen by its number. */
  private chooseResume(): Promise<string | undefined> {
    const write = (t: string) => this.io.stdout.write(t);
    return chooseSession(
      listSessions(),
      write,
      async (question) => {
        write(question);
        const answer = await this.nextLine();
        // A terminal echoed the answer and its newline; piped input did not.
        if (!this.stdinTty) write('\n');
        return answer;
      },
      1,
    );
  }

  // ---- permission questions ----------------------------------------------------------------

  /** A person at the keyboard answers what the rules ask; piped input has nobody to ask. */
  private asker(): TerminalAsker | null {
    if (!this.stdinTty || typeof (this.io.stdin as NodeJS.ReadStream).setRawMode !== 'function') return null;
    return new TerminalAsker(() => this.rt?.desk ?? null, {
      write: (t) => this.questionText(t),
      listen: (onKey) => this.takeKeys(onKey),
      unlisten: () => this.giveKeysBack(),
      cancelTurn: () => {
        if (this.rt) this.cancel(this.rt);
      },
      interrupt: () => {
        process.emit('SIGINT' as never);
      },
    });
  }

  /** With stdout redirected (`clm -H > log`) the person sees only stderr: the question and its answer go there, as in one-shot runs. */
  private questionText(t: string): void {
    if (!this.tty) {
      this.io.stderr.write(t);
      return;
    }
    this.out.newline();
    this.out.write(t);
  }

  /** The line reader steps aside and single keys go to the question; how many typed before were dropped. */
  private takeKeys(onKey: (k: Key) => void): number {
    const input = this.io.stdin as NodeJS.ReadStream;
    const pending = this.rl.line;
    this.suspended = true;
    this.rl.close();
    this.suspended = false;
    emitKeypressEvents(input);
    input.setRawMode(true);
    const dropped = discardTypeAhead(input);
    const handler = (s: string | undefined, k: Key | undefined) => onKey(k ?? { sequence: s });
    input.on('keypress', handler);
    input.resume();
    this.keys = { handler, history: (this.rl as unknown as { history: string[] }).history ?? [], pending };
    // A line being typed when the question came is a run of typing going on.
    return dropped + (pending ? 1 : 0);
  }

  private giveKeysBack(): void {
    if (!this.keys) return;
    const input = this.io.stdin as NodeJS.ReadStream;
    input.off('keypress', this.keys.handler);
    input.setRawMode(false);
    const { history, pending } = this.keys;
    this.keys = null;
    if (!this.eof) this.openReader(history, pending);
  }

  // ---- turns -------------------------------------------------------------------------------

  private event(e: AgentEvent): void {
    this.out.event(e);
    if (e.type !== 'turn_done') return;
    this.rt?.desk.turnEnded();
    this.turnEnded?.();
  }

  /** The conversation resumed (if any), then the banner. */
  private greet(rt: Runtime, resumeId: string | undefined): void {
    if (resumeId) {
      this.out.replay(rt.agent.messages, (s) => this.clean(s));
      this.out.write(`[resumed session ${resumeId}]\n`);
    }
    const instructions = rt.instructions?.summary();
    this.out.write(
      `clm agent. api: ${this.clean(rt.run.baseUrl)}\n${instructions ? `instructions: ${this.clean(instructions)}\n` : ''}type 'quit' or 'exit' to stop.\n`,
    );
  }

  private cancel(rt: Runtime): boolean {
    try {
      rt.agent.cancel();
      return true;
    } catch {
      // Nothing in flight, or a cancel already under way.
      return false;
    }
  }

  /**
   * Ctrl-C cancels a running turn; at the prompt it ends the REPL (status 130) the normal way, so
   * the session is closed (an empty one deleted). A second one while ending exits at once.
   */
  private interrupt(rt: Runtime): void {
    if (this.cancel(rt)) return;
    if (this.interrupted) process.exit(130);
    this.interrupted = true;
    this.stopped = true;
    this.wake?.();
  }

  /** Line after line until quit, exit, the end of the input or Ctrl-C. */
  private async loop(rt: Runtime): Promise<void> {
    for (;;) {
      this.prompt();
      this.atPrompt = true;
      const line = await this.nextLine();
      this.atPrompt = false;
      // A terminal echoed the typed line and its newline; piped input left the cursor after `user> `.
      if ((this.io.stdin as { isTTY?: boolean }).isTTY) this.out.atLineStart = true;
      if (line === null) {
        this.out.write('\n');
        return;
      }
      const p = line.trim();
      if (p === 'quit' || p === 'exit') return;
      if (!p) continue;
      // A background job's notification may have started a turn while we waited for this line.
      await this.idle(rt);
      if (this.stopped) return;
      await this.turn(rt, line);
    }
  }

  private prompt(): void {
    this.out.newline();
    if (this.tty && this.lines.length && !this.stopped) {
      // A line typed while the turn ran: its echo went by in the middle of the reply, so it is
      // shown again after its prompt, as if typed now.
      this.out.write(`user> ${this.clean(this.lines[0]!)}\n`);
    } else if (this.tty) {
      this.rl.setPrompt('user> ');
      this.rl.prompt();
      this.out.atLineStart = false;
    } else this.out.write('user> ');
  }

  private async turn(rt: Runtime, line: string): Promise<void> {
    const ended = new Promise<void>((r) => {
      this.turnEnded = r;
    });
    try {
      rt.submit(line);
    } catch (e) {
      this.io.stderr.write(`error: ${this.clean(e instanceof ClmError ? e.message : String(e))}\n`);
      return;
    }
    await ended;
    // Background-job notifications may start turns of their own: let them finish first.
    await this.idle(rt);
  }

  private async idle(rt: Runtime): Promise<void> {
    while (rt.agent.busy)
      await new Promise<void>((r) => {
        this.turnEnded = r;
      });
  }
}
