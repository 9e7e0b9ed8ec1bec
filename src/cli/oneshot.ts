// One-shot mode (-o PROMPT): one turn, printed as text, json or stream-json; exit 0 when the turn
// succeeded, 1 when it failed, 130 when interrupted. With a person at the terminal (stdin a TTY)
// a gated tool runs only after they allow it, asked on stderr so stdout keeps only the result;
// with stdin redirected (scripts, CI) tools run unasked, restricted by --allow-tools/--deny-tools.

import { ECANCELED, EIO } from '../core/errors.js';
import type { AgentEvent } from '../core/events.js';
import { forTerminal } from '../core/terminal-text.js';
import { guardEvents, guardSummary, Masker } from './guard.js';
import { hideResumeCompaction, streamJsonRenderer, textRenderer, type Out } from './render.js';
import { summaryJson, Tally, type RunSummary } from './run-summary.js';
import { CliError, createRuntime, sessionLine, type RunEvent, type Runtime } from './runtime.js';
import { ConfigProblem, type ResolvedRun } from './resolve-run.js';
import { UsageError, type CliArgs } from './args.js';
import { PermissionPrompt, type Key } from './permission-prompt.js';
import { emitKeypressEvents } from 'node:readline';
import { isRuntimeEvent } from './runtime-events.js';
import { onInterrupt, onTerminate } from './signal-handlers.js';
import { discardTypeAhead } from './type-ahead.js';
import { turnError } from './turn-error.js';

export interface Io {
  stdout: Out;
  stderr: Out;
  color: boolean;
  /** Where a person answers permission questions; absent or not a TTY ⇒ tools run unasked. */
  stdin?: NodeJS.ReadableStream;
}

/** The permission question on a terminal: one keypress on stdin (raw), the question on stderr. */
function terminalPrompt(io: Io, runtime: () => Runtime | null): PermissionPrompt | null {
  const input = io.stdin as NodeJS.ReadStream | undefined;
  if (!input?.isTTY || typeof input.setRawMode !== 'function') return null;
  let handler: ((s: string | undefined, k: Key | undefined) => void) | null = null;
  return new PermissionPrompt({
    write: (t) => io.stderr.write(t),
    listen: (onKey) => {
      emitKeypressEvents(input);
      input.setRawMode(true);
      discardTypeAhead(input);
      handler = (s, k) => onKey(k ?? { sequence: s });
      input.on('keypress', handler);
      input.resume();
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
  });
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
  // Secrets are masked on every output path; the text format is for a terminal, so its controls
  // are shown, not obeyed (json's notices on stderr too).
  const masker = new Masker();
  const forStderr = (t: string) => forTerminal(masker.mask(t));
  const display = (e: AgentEvent) => {
    if (held) held.push(e);
    else if (text) text.event(e);
    else if (stream) stream.event(e);
    else if (e.type === 'notice') io.stderr.write(`notice: ${forTerminal(e.text)}\n`);
  };
  const show = guardEvents(display, { masker, terminal: args.outputFormat === 'text' });

  let rt: Runtime | null = null;
  const asker = terminalPrompt(io, () => rt);
  let resolveDone!: (s: number) => void;
  const done = new Promise<number>((r) => {
    resolveDone = r;
  });
  let finished = false;
  const onEvent = hideResumeCompaction((e: RunEvent) => {
    if (isRuntimeEvent(e)) return;
    tally.event(e);
    show(e);
    if (e.type === 'turn_done') asker?.turnEnded();
    if (e.type === 'turn_done' && !finished) {
      finished = true;
      resolveDone(e.status);
    }
  });

  // Ctrl-C while starting (config, plugin worker, MCP servers) ends the run with 130 at once;
  // json and stream-json print their result object first, so a script always gets one.
  let resolved: ResolvedRun | null = null;
  if (args.outputFormat !== 'text') {
    onInterrupt(() => {
      onInterrupt(null);
      const o = summaryJson({
        status: 'cancelled',
        exitCode: 130,
        result: '',
        usage: tally.usage,
        toolCalls: [],
        model: resolved?.model ?? args.model ?? '',
        provider: resolved?.providerName ?? resolved?.provider ?? args.provider ?? '',
        durationMs: Date.now() - started,
      });
      const out = io.stdout as { write(s: string, cb?: () => void): unknown };
      out.write(`${JSON.stringify(o)}\n`, () => process.exit(130));
      setTimeout(() => process.exit(130), 2000).unref();
    });
  }
  let runtime: Runtime;
  try {
    runtime = await createRuntime({
      args,
      onEvent,
      ...(asker ? { onPermission: (req) => asker.request(req) } : {}),
      policy: { allow: args.allowTools, deny: args.denyTools },
      resumeId: args.resume || undefined,
      onResolved: (r) => {
        resolved = r;
      },
      onSecrets: (list) => masker.add(list),
    });
    rt = runtime;
    await runtime.ready;
  } catch (e) {
    // The run cannot start (config.lua, a session that cannot be resumed): json and stream-json
    // still end with their result object, holding the message the program prints on stderr.
    if (args.outputFormat !== 'text') {
      onInterrupt(null);
      const known = resolved as ResolvedRun | null; // set by onResolved, which TypeScript cannot see
      const o = guardSummary(
        {
          status: 'error',
          exitCode: startupExitCode(e),
          result: '',
          error: (e as Error)?.message ?? String(e),
          usage: tally.usage,
          toolCalls: [],
          model: known?.model ?? args.model ?? '',
          provider: known?.providerName ?? known?.provider ?? args.provider ?? '',
          durationMs: Date.now() - started,
        },
        masker,
      );
      io.stdout.write(`${JSON.stringify(summaryJson(o))}\n`);
    }
    throw e;
  }
  stream?.line({
    type: 'start',
    session_id: runtime.session?.id ?? null,
    model: runtime.run.model,
    provider: runtime.run.providerName ?? runtime.run.provider,
    base_url: masker.mask(runtime.run.baseUrl),
    tools: runtime.advertisedTools(),
  });
  const startup = held ?? [];
  held = null;
  for (const e of startup) display(e); // already through the guard

  // SIGTERM and SIGHUP (timeout(1), a closed terminal) end the run at once, but as a run that
  // ends: json and stream-json print their result object and the kept session is named, so a
  // script still gets its answer and can resume. The exit hooks stop the tool processes.
  onTerminate((signal, code) => {
    onTerminate(null);
    onInterrupt(null);
    const outcome = runtime.closeSessionNow();
    const summary = guardSummary(
      {
        status: 'cancelled',
        exitCode: code,
        result: tally.text,
        error: `ended by ${signal}`,
        usage: tally.usage,
        toolCalls: tally.toolCalls,
        sessionId: outcome.sessionKept ? runtime.session?.id : undefined,
        model: runtime.run.model,
        provider: runtime.run.providerName ?? runtime.run.provider,
        durationMs: Date.now() - started,
      },
      masker,
    );
    text?.endText();
    io.stderr.write(`clm: ended by ${signal}\n`);
    const line = sessionLine(runtime.session, outcome);
    if (line) io.stderr.write(line);
    const exit = () => process.exit(code);
    if (args.outputFormat === 'text') exit();
    else (io.stdout as { write(s: string, cb?: () => void): unknown }).write(`${JSON.stringify(summaryJson(summary))}\n`, exit);
    setTimeout(exit, 2000).unref();
  });

  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    try {
      runtime.agent.cancel();
    } catch {
      /* nothing in flight */
    }
  };
  onInterrupt(onSigint);
  try {
    runtime.agent.submit(prompt);
  } catch (e) {
    if (!finished) {
      finished = true;
      resolveDone(EIO);
    }
    text?.event({ type: 'turn_done', status: EIO });
    io.stderr.write(`error: ${forStderr((e as Error).message)}\n`);
  }
  const status = await done;
  // From here a Ctrl-C or SIGTERM ends the program at once (the exit hooks still stop tool processes).
  onInterrupt(null);
  onTerminate(null);
  text?.endText();

  const exitCode = interrupted || status === ECANCELED ? 130 : status === 0 ? 0 : 1;
  const summary: RunSummary = guardSummary(
    {
      status: status === 0 ? 'ok' : status === ECANCELED ? 'cancelled' : 'error',
      exitCode,
      result: tally.text,
      error: status !== 0 ? turnError(status, runtime.agent.lastError) || undefined : undefined,
      usage: tally.usage,
      toolCalls: tally.toolCalls,
      sessionId: runtime.session?.id,
      model: runtime.run.model,
      provider: runtime.run.providerName ?? runtime.run.provider,
      durationMs: Date.now() - started,
    },
    masker,
  );
  const outcome = await runtime.close();
  if (!outcome.sessionKept) summary.sessionId = undefined;
  // The same object, key for key, in both formats.
  if (args.outputFormat !== 'text') io.stdout.write(JSON.stringify(summaryJson(summary)) + '\n');
  const line = sessionLine(runtime.session, outcome);
  if (line) io.stderr.write(line);
  return exitCode;
}
