// Headless REPL (-H, or stdin/stdout not a terminal): `user> ` prompts, streamed `assistant> `
// replies, tool and usage lines. Every input line is processed in order (lines typed or piped
// while a turn runs wait their turn); quit, exit or EOF end the session after the last turn.
// With a person at a terminal (stdin a TTY) a gated tool runs only after they allow it
// (permission-prompt.ts); piped input runs tools without asking (nobody is there to answer).

import { createInterface, emitKeypressEvents, type Interface } from 'node:readline';
import { CONTEXT_UPDATE_PREFIX } from '../core/history.js';
import { ClmError, ECANCELED } from '../core/errors.js';
import type { AgentEvent } from '../core/events.js';
import { forTerminal } from '../core/terminal-text.js';
import type { Message } from '../core/types.js';
import { listSessions, formatSessionList } from '../session/index.js';
import type { CliArgs } from './args.js';
import { guardEvents, Masker } from './guard.js';
import { PermissionPrompt, type Key } from './permission-prompt.js';
import { discardTypeAhead } from './type-ahead.js';
import { hideResumeCompaction, oneLine, type Out } from './render.js';
import { CliError, createRuntime, sessionLine, type RunEvent, type Runtime } from './runtime.js';
import { isRuntimeEvent } from './runtime-events.js';
import { onInterrupt } from './signal-handlers.js';
import { turnError } from './turn-error.js';

const DIM = '\x1b[2m',
  RED = '\x1b[31m',
  YELLOW = '\x1b[33m',
  RESET = '\x1b[0m';

export async function runRepl(
  args: CliArgs,
  io: { stdin: NodeJS.ReadableStream; stdout: Out; stderr: Out; color: boolean },
): Promise<number> {
  const c = (code: string, s: string) => (io.color ? `${code}${s}${RESET}` : s);
  // On a terminal, readline edits the line (arrows, history, Ctrl-A/E/U…); piped input is read raw.
  const stdinTty = !!(io.stdin as { isTTY?: boolean }).isTTY;
  const tty = stdinTty && !!(io.stdout as { isTTY?: boolean }).isTTY;
  const lines: string[] = [];
  let eof = false;
  /** Set by Ctrl-C at the prompt: no further input is processed. */
  let stopped = false;
  let wake: (() => void) | null = null;
  /** The main loop waits at `user> ` (not for a turn). */
  let atPrompt = false;
  // The line reader. A permission question takes the keys for itself: the reader is closed
  // (keeping its history and any half-typed line) and opened again after the answer.
  let rl!: Interface;
  let suspended = false;
  const openReader = (history: string[] = [], pending = '') => {
    rl = createInterface({
      input: io.stdin,
      output: tty ? (io.stdout as NodeJS.WritableStream) : undefined,
      terminal: tty,
      crlfDelay: Infinity,
      historySize: 500,
      history,
    });
    // With terminal editing, readline turns Ctrl-C into its own event: route it to ours.
    rl.on('SIGINT', () => {
      process.emit('SIGINT' as never);
    });
    rl.on('line', (l) => {
      lines.push(l);
      wake?.();
    });
    rl.on('close', () => {
      if (!suspended) {
        eof = true;
        wake?.();
      }
    });
    if (atPrompt && tty) {
      rl.setPrompt('user> ');
      rl.prompt();
    }
    if (pending) rl.write(pending);
  };
  openReader();
  const nextLine = async (): Promise<string | null> => {
    while (!lines.length && !eof && !stopped)
      await new Promise<void>((r) => {
        wake = r;
      });
    wake = null;
    return lines.length && !stopped ? lines.shift()! : null;
  };

  let resumeId = args.resume || undefined;
  if (args.resume === '') {
    const rows = listSessions();
    if (!rows.length) throw new CliError('no saved sessions', 1);
    io.stdout.write(formatSessionList(rows));
    io.stdout.write(`resume which session? [1-${rows.length}] `);
    const ans = (await nextLine())?.trim() ?? '';
    // A terminal echoed the answer and its newline; piped input did not.
    if (!stdinTty) io.stdout.write('\n');
    const n = Number(ans);
    if (!Number.isInteger(n) || n < 1 || n > rows.length) throw new CliError('no such session', 1);
    resumeId = rows[n - 1]!.id;
  }

  let assistantOpen = false;
  let atLineStart = true;
  const w = (s: string) => {
    if (s) {
      io.stdout.write(s);
      atLineStart = s.endsWith('\n');
    }
  };
  const newline = () => {
    if (!atLineStart) w('\n');
  };
  let turnEnded: (() => void) | null = null;
  let rt: Runtime | null = null;
  // A person at the keyboard answers for every gated tool; --allow-tools/--deny-tools answer
  // for the tools they name (tool-policy.ts).
  const prompt =
    stdinTty && typeof (io.stdin as NodeJS.ReadStream).setRawMode === 'function'
      ? new PermissionPrompt({
          // With stdout redirected (`clm -H > log`) the person sees only stderr: the question
          // and its answer go there, as in one-shot runs.
          write: (t) => {
            if (!tty) {
              io.stderr.write(t);
              return;
            }
            newline();
            w(t);
          },
          listen: (onKey) => {
            const input = io.stdin as NodeJS.ReadStream;
            const pending = rl.line;
            suspended = true;
            rl.close();
            suspended = false;
            emitKeypressEvents(input);
            input.setRawMode(true);
            discardTypeAhead(input);
            const handler = (s: string | undefined, k: Key | undefined) => onKey(k ?? { sequence: s });
            input.on('keypress', handler);
            input.resume();
            keys = { handler, history: (rl as unknown as { history: string[] }).history ?? [], pending };
          },
          unlisten: () => {
            if (!keys) return;
            const input = io.stdin as NodeJS.ReadStream;
            input.off('keypress', keys.handler);
            input.setRawMode(false);
            const { history, pending } = keys;
            keys = null;
            if (!eof) openReader(history, pending);
          },
          cancelTurn: () => {
            try {
              rt?.agent.cancel();
            } catch {
              /* already over */
            }
          },
          interrupt: () => {
            process.emit('SIGINT' as never);
          },
        })
      : null;
  let keys: { handler: (s: string | undefined, k: Key | undefined) => void; history: string[]; pending: string } | null = null;
  const show = (e: AgentEvent) => {
    switch (e.type) {
      case 'text':
        if (!assistantOpen) {
          newline();
          w('assistant> ');
          assistantOpen = true;
        }
        w(e.text);
        return;
      case 'reasoning':
        if (e.text) w(c(DIM, e.text));
        return;
      case 'tool_begin':
        newline();
        assistantOpen = false;
        w(`[tool: ${e.name} ${oneLine(e.args)}]\n`);
        return;
      case 'tool_result':
        newline();
        if (e.outcome === 'ok') w(`[result: ${e.name}]\n${e.content}${e.content.endsWith('\n') ? '' : '\n'}`);
        else w(c(e.outcome === 'timedout' ? YELLOW : RED, `[${e.outcome === 'timedout' ? 'timeout' : 'x'} ${e.name}] ${e.content}`) + '\n');
        return;
      case 'tool_batch':
        if (e.total > 1 && e.completed > 0) w(`[tools ${e.completed}/${e.total}]\n`);
        return;
      case 'usage': {
        const u = e.usage;
        newline();
        w(c(DIM, `[${u.promptTokens}+${u.completionTokens} tok${u.tokensPerSec ? `, ${u.tokensPerSec.toFixed(1)} tok/s` : ''}]`) + '\n');
        return;
      }
      case 'finish':
        if (e.reason === 'length') {
          newline();
          w(c(YELLOW, '[truncated: hit token limit]') + '\n');
        }
        if (e.reason === 'content_filter') {
          newline();
          w(c(RED, '[stopped: content filter]') + '\n');
        }
        return;
      case 'notice':
        io.stderr.write(`notice: ${e.text}\n`);
        return;
      case 'turn_done':
        if (e.status === ECANCELED) {
          newline();
          w(c(YELLOW, '[cancelled]') + '\n');
        } else if (e.status !== 0 && e.error) io.stderr.write(`error: ${turnError(e.status, e.error)}\n`);
        assistantOpen = false;
        prompt?.turnEnded();
        turnEnded?.();
        return;
      default:
    }
  };
  // Everything shown passes the guard: secrets masked, terminal controls shown instead of obeyed.
  const masker = new Masker();
  const clean = (t: string) => forTerminal(masker.mask(t));
  const guarded = guardEvents(show, { masker, terminal: true });
  rt = await createRuntime({
    args,
    onEvent: hideResumeCompaction((e: RunEvent) => {
      if (!isRuntimeEvent(e)) guarded(e);
    }),
    onPermission: prompt ? (req) => prompt.request(req) : undefined,
    onSecrets: (list) => masker.add(list),
    policy: { allow: args.allowTools, deny: args.denyTools },
    resumeId,
  });
  const runtime = rt;
  await runtime.ready;
  if (resumeId) {
    replay(runtime.agent.messages, (s) => w(clean(s)));
    w(`[resumed session ${resumeId}]\n`);
  }
  w(`clm agent. api: ${clean(runtime.run.baseUrl)}\ntype 'quit' or 'exit' to stop.\n`);

  // Ctrl-C cancels a running turn; at the prompt it ends the REPL (status 130) the normal way,
  // so the session is closed (an empty one deleted). A second one while ending exits at once.
  let interrupted = false;
  const onSigint = () => {
    try {
      runtime.agent.cancel();
      return;
    } catch {
      /* nothing in flight */
    }
    if (interrupted) process.exit(130);
    interrupted = true;
    stopped = true;
    wake?.();
  };
  onInterrupt(onSigint);
  // The reader of our output went away (`clm -H < prompts | head`), or the output cannot be
  // written at all: stop after the current turn instead of running every remaining line (and
  // its tools) for nobody.
  const out = io.stdout as { on?(ev: 'error', fn: (e: NodeJS.ErrnoException) => void): unknown };
  out.on?.('error', () => {
    stopped = true;
    try {
      runtime.agent.cancel();
    } catch {
      /* idle */
    }
    wake?.();
  });
  let status = 0;
  for (;;) {
    newline();
    if (tty) {
      rl.setPrompt('user> ');
      rl.prompt();
      atLineStart = false;
    } else w('user> ');
    atPrompt = true;
    const line = await nextLine();
    atPrompt = false;
    // A terminal echoed the typed line and its newline; piped input left the cursor after `user> `.
    if ((io.stdin as { isTTY?: boolean }).isTTY) atLineStart = true;
    if (line === null) {
      w('\n');
      break;
    }
    const p = line.trim();
    if (p === 'quit' || p === 'exit') break;
    if (!p) continue;
    // A background job's notification may have started a turn while we waited for this line.
    while (runtime.agent.busy)
      await new Promise<void>((r) => {
        turnEnded = r;
      });
    if (stopped) break;
    const ended = new Promise<void>((r) => {
      turnEnded = r;
    });
    try {
      runtime.agent.submit(line);
    } catch (e) {
      io.stderr.write(`error: ${clean(e instanceof ClmError ? e.message : String(e))}\n`);
      continue;
    }
    await ended;
    // Background-job notifications may start turns of their own: let them finish first.
    while (runtime.agent.busy)
      await new Promise<void>((r) => {
        turnEnded = r;
      });
    status = runtime.agent.state === 'error' ? 1 : 0;
  }
  onInterrupt(null);
  rl.close();
  const line = sessionLine(runtime.session, await runtime.close());
  if (line) io.stderr.write(line);
  void status;
  return interrupted ? 130 : 0;
}

/** A resumed conversation as the REPL would have shown it (tool results in full, as it does). */
function replay(messages: readonly Message[], w: (s: string) => void): void {
  const nl = (t: string) => (t.endsWith('\n') ? t : `${t}\n`);
  for (const m of messages) {
    if (m.role === 'user' && m.content && !m.content.startsWith(CONTEXT_UPDATE_PREFIX)) w(`user> ${nl(m.content)}`);
    else if (m.role === 'assistant') {
      if (m.content) w(`assistant> ${nl(m.content)}`);
      for (const c of m.toolCalls ?? []) w(`[tool: ${c.name} ${oneLine(c.args)}]\n`);
    } else if (m.role === 'tool') {
      const name = m.toolName ?? 'tool';
      const text = m.content ?? '';
      if (text.startsWith('[tool failed:')) w(`[x ${name}] ${nl(text)}`);
      else w(`[result: ${name}]\n${nl(text)}`);
    }
  }
}
