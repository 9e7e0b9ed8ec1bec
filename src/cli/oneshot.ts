// One-shot mode (-o PROMPT): one turn, printed as text, json or stream-json; exit 0 when the turn
// succeeded, 1 when it failed, 130 when interrupted.

import { ECANCELED } from '../core/errors.js';
import { forTerminal } from '../core/terminal-text.js';
import type { CliArgs } from './args.js';
import { eventCallbacks } from './callbacks.js';
import { guardEvents, guardSummary, Masker } from './guard.js';
import type { RunEvents, RunSummary } from './events.js';
import { silentRenderer, streamJsonRenderer, summaryJson, Tally, textRenderer, type Out } from './render.js';
import { createRuntime, sessionLine, type Runtime } from './runtime.js';
import { onInterrupt } from './signals.js';

export interface Io {
  stdout: Out;
  stderr: Out;
  color: boolean;
}

export async function runOneshot(args: CliArgs, io: Io): Promise<number> {
  const started = Date.now();
  const prompt = args.oneshot!;
  const tally = new Tally();
  const text = args.outputFormat === 'text' ? textRenderer(io.stdout, io.stderr, io.color) : null;
  const stream = args.outputFormat === 'stream-json' ? streamJsonRenderer(io.stdout) : null;
  // Secrets are masked on every output path; text output is for a terminal, so controls are shown, not obeyed.
  const masker = new Masker();
  const ev: RunEvents = guardEvents(text ?? stream ?? silentRenderer(), { masker, terminal: args.outputFormat === 'text' });
  const forStderr = (t: string) => forTerminal(masker.mask(t));
  // json keeps stdout for the one object; notices still reach the user on stderr. stream-json
  // holds the notices of start-up (config, plugins, MCP) until its `start` event is out, so
  // `start` is always the first event.
  let held: string[] | null = stream ? [] : null;
  const notice = (t: string) => {
    if (held) held.push(t);
    else if (args.outputFormat === 'json') io.stderr.write(`notice: ${forStderr(t)}\n`);
    else ev.notice(t);
  };

  let resolveDone!: (s: number) => void;
  const done = new Promise<number>((r) => { resolveDone = r; });
  let finished = false;
  let rt: Runtime | null = null;
  const callbacks = eventCallbacks(ev, tally, (s) => { if (!finished) { finished = true; resolveDone(s); } }, () => rt?.agent.lastError ?? '');
  // The agent's own notices (a compaction, tools unsupported, …) take the same way as the
  // start-up ones: json's silent renderer would drop them.
  callbacks.onNotice = notice;

  // Ctrl-C while starting (plugin worker, MCP servers) ends the run with 130 (signals.ts).
  rt = await createRuntime({
    args, callbacks, notice, onSecrets: (list) => masker.set(list),
    policy: { allow: args.allowTools, deny: args.denyTools },
    resumeId: args.resume || undefined,
  });
  const runtime = rt;
  stream?.event({ type: 'start', session_id: runtime.session?.id ?? null, model: runtime.run.model, provider: runtime.run.providerName ?? runtime.run.provider, base_url: masker.mask(runtime.run.baseUrl), tools: runtime.agent.toolNames });
  const startup = held ?? [];
  held = null;
  for (const t of startup) notice(t);

  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    try { runtime.agent.cancel(); } catch { /* nothing in flight */ }
  };
  onInterrupt(onSigint);
  try {
    runtime.agent.submit(prompt);
  } catch (e) {
    callbacks.onTurnDone?.(-5);
    io.stderr.write(`error: ${forStderr((e as Error).message)}\n`);
  }
  const status = await done;
  // From here a Ctrl-C ends the program at once (the exit hooks still stop tool processes).
  onInterrupt(null);
  text?.endText();

  const exitCode = interrupted || status === ECANCELED ? 130 : status === 0 ? 0 : 1;
  const summary: RunSummary = guardSummary({
    status: status === 0 ? 'ok' : status === ECANCELED ? 'cancelled' : 'error',
    exitCode, result: tally.text,
    error: status !== 0 ? runtime.agent.lastError || undefined : undefined,
    usage: tally.usage, toolCalls: tally.toolCalls, sessionId: runtime.session?.id,
    model: runtime.run.model, provider: runtime.run.providerName ?? runtime.run.provider,
    durationMs: Date.now() - started,
  }, masker);
  const outcome = await runtime.close();
  if (!outcome.sessionKept) summary.sessionId = undefined;
  if (args.outputFormat === 'json') io.stdout.write(JSON.stringify(summaryJson(summary)) + '\n');
  if (stream) stream.event(summaryJson(summary));
  const line = sessionLine(runtime.session, outcome);
  if (line) io.stderr.write(line);
  return exitCode;
}
