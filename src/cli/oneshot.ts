// One-shot mode (-o PROMPT): one turn, printed as text, json or stream-json; exit 0 when the turn
// succeeded, 1 when it failed, 130 when interrupted, 143/129 when ended by SIGTERM/SIGHUP. Every
// tool call goes through the permission desk: with a person at the terminal (stdin a TTY) a call
// the rules ask about runs only after they allow it, asked on stderr so stdout keeps only the
// result; with stdin redirected (scripts, CI) nobody is asked and permissions.unattended decides.

import { ECANCELED, EIO } from '../core/errors.js';
import type { AgentEvent } from '../core/events.js';
import { forTerminal } from '../core/terminal-text.js';
import { Secrets } from '../host/redact.js';
import { guardSummary } from './guard.js';
import { hideResumeCompaction, streamJsonRenderer, textRenderer, type Out } from './render.js';
import { exitWithResult, permissionJson, printResult, signalSummary, Tally, type RunSummary } from './run-summary.js';
import { CliError, createRuntime, sessionLine, type RunEvent, type Runtime } from './runtime.js';
import { ConfigProblem, type ResolvedRun } from './resolve-run.js';
import { UsageError, type CliArgs } from './args.js';
import { type Key, TerminalAsker } from './permission-terminal.js';
import { isRuntimeEvent } from './runtime-events.js';
import { onInterrupt, onUnhandledSignal, type EndSignal } from './signal-handlers.js';
import { takeOverIfAsked } from './session-takeover.js';
import { discardTypeAhead } from './type-ahead.js';
import { turnError } from './turn-error.js';
import { lazyBuiltin } from '../host/lazy-builtin.js';

const readline = lazyBuiltin<typeof import('node:readline')>('node:readline');

export interface Io {
  stdout: Out;
  stderr: Out;
  color: boolean;
  /** Where a person answers permission questions; absent or not a TTY ⇒ tools run unasked. */
  stdin?: NodeJS.ReadableStream;
}

/** The permission question on a terminal: one keypress on stdin (raw), the question on stderr. */
function terminalAsker(io: Io, runtime: () => Runtime | null): TerminalAsker | null {
  const input = io.stdin as NodeJS.ReadStream | undefined;
  if (!input?.isTTY || typeof input.setRawMode !== 'function') return null;
  let handler: ((s: string | undefined, k: Key | undefined) => void) | null = null;
  return new TerminalAsker(
    () => runtime()?.desk ?? null,
    {
      write: (t) => io.stderr.write(t),
      listen: (onKey) => {
        readline().emitKeypressEvents(input);
        input.setRawMode(true);
        const dropped = discardTypeAhead(input);
        handler = (s, k) => onKey(k ?? { sequence: s });
        input.on('keypress', handler);
        input.resume();
        return dropped;
      },
      unlisten: () => {
        if (handler) input.off('keypress', handler);
        handler = null;
        input.setRawMode(false);
        input.pause();
      },
      cancelTurn: () => {
        try {
          runtime()?.agent.cancel();
        } catch {
          /* already over */
        }
      },
      interrupt: () => {
        process.emit('SIGINT' as never);
      },
    },
    // Asked to allow a call, but not to run one the sandbox refused outside it: that stays refused.
    false,
  );
}

/** The exit status main() gives a failure to start: 2 for configuration and usage, else the error's own or 1. */
function startupExitCode(e: unknown): number {
  if (e instanceof ConfigProblem || e instanceof UsageError) return 2;
  if (e instanceof CliError) return e.exitCode;
  return 1;
}

export async function runOneshot(args: CliArgs, io: Io): Promise<number> {
  const started = Date.now();
  const prompt = args.oneshot!;
  const tally = new Tally();
  const text = args.outputFormat === 'text' ? textRenderer(io.stdout, io.stderr, io.color) : null;
  const stream = args.outputFormat === 'stream-json' ? streamJsonRenderer(io.stdout) : null;
  // json keeps stdout for the one object; notices still reach the user on stderr. stream-json
  // holds the events of start-up (config, plugins, MCP notices) until its `start` event is out,
  // so `start` is always the first event.
  let held: AgentEvent[] | null = stream ? [] : null;
  // The runtime masks the run's secrets in every event; the text format is for a terminal, so
  // its controls are shown, not obeyed (json's notices on stderr too).
  const secrets = new Secrets();
  const forStderr = (t: string) => forTerminal(secrets.mask(t));
  const display = (e: AgentEvent) => {
    if (held) held.push(e);
    else if (text) text.event(e);
    else if (stream) stream.event(e);
    else if (e.type === 'notice') io.stderr.write(`notice: ${forTerminal(e.text)}\n`);
  };

  let rt: Runtime | null = null;
  const asker = terminalAsker(io, () => rt);
  let resolveDone!: (s: number) => void;
  const done = new Promise<number>((r) => {
    resolveDone = r;
  });
  let finished = false;
  const onEvent = hideResumeCompaction((e: RunEvent) => {
    if (e.type === 'permission') {
      tally.decided(e.id, e.decided);
      if (stream && !held) stream.line({ type: 'permission', id: e.id, name: e.name, ...permissionJson(e.decided) });
    }
    if (e.type === 'tool_sandbox') {
      tally.ran(e.id, e.mode);
      if (stream && !held) stream.line({ type: 'tool_sandbox', id: e.id, name: e.name, sandbox: e.mode });
    }
    if (isRuntimeEvent(e)) return;
    tally.event(e);
    display(e);
    if (e.type === 'turn_done') rt?.desk.turnEnded();
    if (e.type === 'turn_done' && !finished) {
      finished = true;
      resolveDone(e.status);
    }
  });

  // A signal at any moment — while starting (config, plugin worker, MCP servers), during the turn
  // (SIGTERM, SIGHUP, a second Ctrl-C), while shutting down — ends the run at once as cancelled
  // with the signal's exit status: json and stream-json print their result object first, with
  // what the run had done, and a kept session is named, so a script gets its answer and can
  // resume. The exit hooks stop the tool processes.
  let resolved: ResolvedRun | null = null;
  const endBySignal = (signal: EndSignal, code: number) => {
    onInterrupt(null);
    const outcome = rt?.closeSessionNow();
    text?.endText();
    if (signal !== 'SIGINT') io.stderr.write(`clm: ended by ${signal}\n`);
    const line = rt && outcome ? sessionLine(rt.session, outcome) : null;
    if (line) io.stderr.write(line);
    if (args.outputFormat === 'text') process.exit(code);
    const known = rt?.run ?? (resolved as ResolvedRun | null); // set by onResolved, which TypeScript cannot see
    const summary = signalSummary(signal, code, tally, {
      sessionId: outcome?.sessionKept ? rt?.session?.id : undefined,
      model: known?.model ?? args.model ?? '',
      provider: known?.providerName ?? known?.provider ?? args.provider ?? '',
      durationMs: Date.now() - started,
    });
    exitWithResult(io.stdout, guardSummary(summary, secrets));
  };
  onUnhandledSignal(endBySignal);
  let runtime: Runtime;
  try {
    if (args.resume && !args.fork)
      await takeOverIfAsked(args.resume, { stdin: io.stdin ?? process.stdin, stderr: process.stderr }, process.env);
    runtime = await createRuntime({
      args,
      onEvent,
      ...(asker ? { asker } : {}),
      resumeId: args.resume || undefined,
      onResolved: (r) => {
        resolved = r;
      },
      view: args.outputFormat === 'text' ? 'terminal' : 'data',
      secrets,
    });
    rt = runtime;
    await runtime.ready;
  } catch (e) {
    // The run cannot start (config.lua, a session that cannot be resumed): json and stream-json
    // still end with their result object, holding the message the program prints on stderr.
    if (args.outputFormat !== 'text') {
      const known = resolved as ResolvedRun | null; // set by onResolved, which TypeScript cannot see
      const o = guardSummary(
        {
          status: 'error',
          exitCode: startupExitCode(e),
          result: '',
          error: (e as Error)?.message ?? String(e),
          usage: tally.usage,
          toolCalls: [],
          repairs: tally.repairs,
          model: known?.model ?? args.model ?? '',
          provider: known?.providerName ?? known?.provider ?? args.provider ?? '',
          durationMs: Date.now() - started,
        },
        secrets,
      );
      printResult(io.stdout, o);
    }
    throw e;
  }
  stream?.line({
    type: 'start',
    session_id: runtime.session?.id ?? null,
    model: runtime.run.model,
    provider: runtime.run.providerName ?? runtime.run.provider,
    base_url: secrets.mask(runtime.run.baseUrl),
    tools: runtime.advertisedTools(),
  });
  const startup = held ?? [];
  held = null;
  for (const e of startup) display(e);

  // The first Ctrl-C cancels the turn, which then ends as usual; a second ends the run at once.
  let interrupted = false;
  const onSigint = () => {
    if (interrupted) return endBySignal('SIGINT', 130);
    interrupted = true;
    try {
      runtime.agent.cancel();
    } catch {
      /* nothing in flight */
    }
  };
  onInterrupt(onSigint);
  try {
    runtime.submit(prompt);
  } catch (e) {
    if (!finished) {
      finished = true;
      resolveDone(EIO);
    }
    text?.event({ type: 'turn_done', status: EIO });
    io.stderr.write(`error: ${forStderr((e as Error).message)}\n`);
  }
  const status = await done;
  // From here a signal ends the program at once (the exit hooks still stop tool processes).
  onInterrupt(null);
  text?.endText();

  const exitCode = interrupted || status === ECANCELED ? 130 : status === 0 ? 0 : 1;
  const last = (await runtime.checkpoints.turns()).at(-1);
  const summary: RunSummary = guardSummary(
    {
      status: status === 0 ? 'ok' : status === ECANCELED ? 'cancelled' : 'error',
      exitCode,
      result: tally.text,
      error: status !== 0 ? turnError(status, runtime.agent.lastError) || undefined : undefined,
      usage: tally.usage,
      toolCalls: tally.toolCalls,
      repairs: tally.repairs,
      sessionId: runtime.session?.id,
      checkpoint: last?.before ? { turn: last.turn, files: last.files ?? 0 } : undefined,
      model: runtime.run.model,
      provider: runtime.run.providerName ?? runtime.run.provider,
      durationMs: Date.now() - started,
    },
    secrets,
  );
  const outcome = await runtime.close();
  if (!outcome.sessionKept) summary.sessionId = undefined;
  // The same object, key for key, in both formats.
  if (args.outputFormat !== 'text') printResult(io.stdout, summary);
  const line = sessionLine(runtime.session, outcome);
  if (line) io.stderr.write(line);
  return exitCode;
}
