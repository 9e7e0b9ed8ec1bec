// Headless REPL (-H, or stdin/stdout not a terminal): `user> ` prompts, streamed `assistant> `
// replies, tool and usage lines. Every input line is processed in order (lines typed or piped
// while a turn runs wait their turn); quit, exit or EOF end the session after the last turn.

import { createInterface } from 'node:readline';
import { ClmError, ECANCELED } from '../core/errors.js';
import { listSessions, formatSessionList } from '../session/index.js';
import type { CliArgs } from './args.js';
import { eventCallbacks } from './callbacks.js';
import { forTerminal } from '../core/terminal-text.js';
import { guardEvents, Masker } from './guard.js';
import type { RunEvents } from './events.js';
import { oneLine, Tally, type Out } from './render.js';
import { CliError, createRuntime, sessionLine, type Runtime } from './runtime.js';
import { onInterrupt } from './signals.js';

const DIM = '\x1b[2m', RED = '\x1b[31m', YELLOW = '\x1b[33m', RESET = '\x1b[0m';

export async function runRepl(args: CliArgs, io: { stdin: NodeJS.ReadableStream; stdout: Out; stderr: Out; color: boolean }): Promise<number> {
  const c = (code: string, s: string) => (io.color ? `${code}${s}${RESET}` : s);
  // On a terminal, readline edits the line (arrows, history, Ctrl-A/E/U…); piped input is read raw.
  const tty = !!(io.stdin as { isTTY?: boolean }).isTTY && !!(io.stdout as { isTTY?: boolean }).isTTY;
  const rl = createInterface({
    input: io.stdin, output: tty ? (io.stdout as NodeJS.WritableStream) : undefined,
    terminal: tty, crlfDelay: Infinity, historySize: 500,
  });
  // With terminal editing, readline turns Ctrl-C into its own event: route it to ours.
  rl.on('SIGINT', () => { process.emit('SIGINT' as never); });
  const lines: string[] = [];
  let eof = false;
  /** Set by Ctrl-C at the prompt: no further input is processed. */
  let stopped = false;
  let wake: (() => void) | null = null;
  rl.on('line', (l) => { lines.push(l); wake?.(); });
  rl.on('close', () => { eof = true; wake?.(); });
  const nextLine = async (): Promise<string | null> => {
    while (!lines.length && !eof && !stopped) await new Promise<void>((r) => { wake = r; });
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
    const n = Number(ans);
    if (!Number.isInteger(n) || n < 1 || n > rows.length) throw new CliError('no such session', 1);
    resumeId = rows[n - 1]!.id;
  }

  let assistantOpen = false;
  let atLineStart = true;
  const w = (s: string) => { if (s) { io.stdout.write(s); atLineStart = s.endsWith('\n'); } };
  const newline = () => { if (!atLineStart) w('\n'); };
  const raw: RunEvents = {
    text(t) { if (!assistantOpen) { newline(); w('assistant> '); assistantOpen = true; } w(t); },
    reasoning(t) { w(c(DIM, t)); },
    toolBegin(name, a) { newline(); assistantOpen = false; w(`[tool: ${name} ${oneLine(a)}]\n`); },
    toolResult(name, content, outcome) {
      newline();
      if (outcome === 'ok') w(`[result: ${name}]\n${content}${content.endsWith('\n') ? '' : '\n'}`);
      else w(c(outcome === 'timedout' ? YELLOW : RED, `[${outcome === 'timedout' ? 'timeout' : 'x'} ${name}] ${content}`) + '\n');
    },
    toolBatch(done, total) { if (total > 1 && done > 0) w(`[tools ${done}/${total}]\n`); },
    usage(u) { newline(); w(c(DIM, `[${u.promptTokens}+${u.completionTokens} tok${u.tokensPerSec ? `, ${u.tokensPerSec.toFixed(1)} tok/s` : ''}]`) + '\n'); },
    finish(r) {
      if (r === 'length') { newline(); w(c(YELLOW, '[truncated: hit token limit]') + '\n'); }
      if (r === 'content_filter') { newline(); w(c(RED, '[stopped: content filter]') + '\n'); }
    },
    state() {},
    notice(t) { io.stderr.write(`notice: ${t}\n`); },
    turnDone(status, error) {
      if (status === ECANCELED) { newline(); w(c(YELLOW, '[cancelled]') + '\n'); }
      else if (status !== 0 && error) io.stderr.write(`error: ${error}\n`);
    },
  };

  // Everything shown passes the guard: secrets masked, terminal controls shown instead of obeyed.
  const masker = new Masker();
  const ev = guardEvents(raw, { masker, terminal: true });
  const clean = (t: string) => forTerminal(masker.mask(t));
  let turnEnded: (() => void) | null = null;
  let rt: Runtime | null = null;
  const tally = new Tally();
  const callbacks = eventCallbacks(ev, tally, () => { assistantOpen = false; turnEnded?.(); }, () => rt?.agent.lastError ?? '');
  rt = await createRuntime({ args, callbacks, notice: ev.notice, onSecrets: (list) => masker.set(list), policy: { allow: args.allowTools, deny: args.denyTools }, resumeId });
  const runtime = rt;
  if (resumeId) w(`[resumed session ${resumeId}]\n`);
  w(`clm agent. api: ${clean(runtime.run.baseUrl)}\ntype 'quit' or 'exit' to stop.\n`);

  // Ctrl-C cancels a running turn; at the prompt it ends the REPL (status 130) the normal way,
  // so the session is closed (an empty one deleted). A second one while ending exits at once.
  let interrupted = false;
  const onSigint = () => {
    try { runtime.agent.cancel(); return; } catch { /* nothing in flight */ }
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
    try { runtime.agent.cancel(); } catch { /* idle */ }
    wake?.();
  });
  let status = 0;
  for (;;) {
    newline();
    if (tty) { rl.setPrompt('user> '); rl.prompt(); atLineStart = false; } else w('user> ');
    const line = await nextLine();
    // A terminal echoed the typed line and its newline; piped input left the cursor after `user> `.
    if ((io.stdin as { isTTY?: boolean }).isTTY) atLineStart = true;
    if (line === null) { w('\n'); break; }
    const p = line.trim();
    if (p === 'quit' || p === 'exit') break;
    if (!p) continue;
    // A background job's notification may have started a turn while we waited for this line.
    while (runtime.agent.busy) await new Promise<void>((r) => { turnEnded = r; });
    if (stopped) break;
    const ended = new Promise<void>((r) => { turnEnded = r; });
    try {
      runtime.agent.submit(line);
    } catch (e) {
      io.stderr.write(`error: ${clean(e instanceof ClmError ? e.message : String(e))}\n`);
      continue;
    }
    await ended;
    // Background-job notifications may start turns of their own: let them finish first.
    while (runtime.agent.busy) await new Promise<void>((r) => { turnEnded = r; });
    status = runtime.agent.state === 'error' ? 1 : 0;
  }
  onInterrupt(null);
  rl.close();
  const line = sessionLine(runtime.session, await runtime.close());
  if (line) io.stderr.write(line);
  void status;
  return interrupted ? 130 : 0;
}
