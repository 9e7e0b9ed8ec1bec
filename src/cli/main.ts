// clm(1): dispatch on flags. Heavy modules (Lua, MCP, config) are imported only by the paths
// that need them, so `clm -V` and a plain one-shot start fast. The signal handlers come first:
// from the start on, no signal ends clm by Node's default action.
//
// This module is the entry of two programs (scripts/build.mjs): the whole one, dist/cli.cjs, and
// the one-shot program, dist/cli-oneshot.cjs, which the launcher runs when the arguments look
// like a one-shot (bin/clm.cjs). The one-shot program holds only what a plain one-shot run needs,
// half of the whole, so a one-shot reads and sets up half the code; any other run it hands to
// the whole program before it has done anything.

import { installSignalHandlers, onUnhandledSignal, takeHeldSignals } from './signal-handlers.js';
import { forTerminal } from '../core/terminal-text.js';
import { CLM_VERSION } from '../host/version.js';
import { lazyBuiltin } from '../host/lazy-builtin.js';
import { parseCommandLine, USAGE, UsageError, usageErrorText, type CliArgs } from './args.js';
import { exitWithResult, signalSummary, Tally } from './run-summary.js';

/**
 * Until the one-shot run takes over, a signal ends it with a result object that knows only the
 * flags (json, stream-json: a script always gets one).
 */
function resultOnSignal(args: CliArgs): void {
  onUnhandledSignal((signal, code) => {
    if (signal !== 'SIGINT') process.stderr.write(`clm: ended by ${signal}\n`);
    const known = { model: args.model ?? '', provider: args.provider ?? '', durationMs: Math.round(process.uptime() * 1000) };
    exitWithResult(process.stdout, signalSummary(signal, code, new Tally(), known));
  });
}

/** The run `argv` asks for; `parsed`: its arguments, when they were read already (the one-shot program's choice). */
async function main(argv: string[], parsed: CliArgs | null): Promise<number> {
  let args: CliArgs;
  try {
    args = parsed ?? parseCommandLine(argv);
  } catch (e) {
    takeHeldSignals();
    if (e instanceof UsageError) {
      process.stderr.write(usageErrorText(forTerminal(e.message)));
      return 2;
    }
    throw e;
  }
  // The output format is known: from here every signal ends the run as that format promises.
  if (args.oneshot !== undefined && args.outputFormat !== 'text') resultOnSignal(args);
  takeHeldSignals();
  if (args.command === 'version') {
    process.stdout.write(`clm ${CLM_VERSION}\n`);
    return 0;
  }
  if (args.command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (args.checkpoint) {
    // The one-shot program's left-out paths: each is `process.env.CLM_PROGRAM !== 'oneshot'`
    // itself, which the build turns into a constant (a variable holding it would not leave out
    // what the path imports).
    if (process.env.CLM_PROGRAM !== 'oneshot') return await checkpointCommand(args.checkpoint);
    throw new Error(ONESHOT_ONLY);
  }
  try {
    if (args.command === 'run' && args.oneshot !== undefined) return await oneshot(args);
    if (process.env.CLM_PROGRAM !== 'oneshot') return await commandOrInteractive(args);
    throw new Error(ONESHOT_ONLY);
  } catch (e) {
    return await failed(e);
  }
}

async function oneshot(args: CliArgs): Promise<number> {
  if (args.resume === '') throw new UsageError('-r without an id needs the REPL; give the session id with -o');
  const { runOneshot } = await import('./oneshot.js');
  const color = !!process.stderr.isTTY && !process.env.NO_COLOR;
  // stdin only where a person can answer on it: for a file or /dev/null, creating
  // process.stdin builds a file stream, whose module pulls in fs/promises, readline and fs.watch.
  const stdin = lazyBuiltin<typeof import('node:tty')>('node:tty')().isatty(0) ? process.stdin : undefined;
  return await runOneshot(args, { stdout: process.stdout, stderr: process.stderr, color, stdin });
}

/** What a run that failed says, and its exit status. */
async function failed(e: unknown): Promise<number> {
  const { CliError } = await import('./cli-error.js');
  const { ConfigProblem } = await import('./resolve-run.js');
  // Messages can quote a file or a server: shown, not obeyed, on a terminal.
  const say = (m: string) => process.stderr.write(`clm: ${forTerminal(m)}\n`);
  if (e instanceof UsageError) {
    process.stderr.write(usageErrorText(forTerminal(e.message)));
    return 2;
  }
  if (e instanceof ConfigProblem) {
    say(e.message);
    return 2;
  }
  if (e instanceof CliError) {
    say(e.message);
    return e.exitCode;
  }
  const name = (e as { name?: string })?.name;
  say(name === 'SessionError' ? (e as Error).message : ((e as Error)?.stack ?? String(e)));
  return 1;
}

// A reader that goes away (`clm -o … | head`) must not crash the run with an EPIPE stack trace:
// the turn finishes, the session is written, the output is simply lost. Any other failure to
// write the output (a full disk, an I/O error) makes the run fail: the result did not arrive.
let outputError: NodeJS.ErrnoException | undefined;

/** "ENOSPC (no space left on device)". */
function describeWriteError(e: NodeJS.ErrnoException): string {
  const text = e.message.replace(/^[A-Z0-9]+: /, '').replace(/, write$/, '');
  return e.code ? `${e.code} (${text})` : text;
}

/** Resolves once everything written to `s` so far has been handed to the OS (or `s` failed). */
function flushed(s: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (!s.writableLength || s.destroyed) resolve();
    else s.write('', () => resolve());
  });
}

const ONESHOT_ONLY = 'the one-shot program runs plain one-shots only (bin/clm.cjs hands the rest over)';

function checkpointCommand(which: NonNullable<CliArgs['checkpoint']>): Promise<number> {
  return import('./checkpoint-commands.js').then(({ runCheckpointCommand }) =>
    runCheckpointCommand(which, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env }),
  );
}

/** A command (setup, models, …), else the UI or the REPL. */
async function commandOrInteractive(args: CliArgs): Promise<number> {
  switch (args.command) {
    case 'setup':
      return (await import('./setup.js')).runSetupCommand(process.stdout, process.stderr);
    case 'models':
      return await (await import('./models-command.js')).runModelsCommand(process.stdout, process.stderr, process.env);
    case 'permissions':
      return await (await import('./permissions-command.js')).runPermissionsCommand(args, process.env, process.stdout);
    case 'mcp':
      return await (await import('./mcp-command.js')).runMcpCommand(args, process.env, process.stdout, process.stderr);
    case 'sandbox-check':
      return await (await import('./sandbox-command.js')).runSandboxCheck(args, process.stdout);
  }
  if (args.outputFormat !== 'text') throw new UsageError(`--output-format ${args.outputFormat} needs -o PROMPT (the REPL prints text)`);
  return runInteractive(args);
}

/** The UI, or the REPL where stdin or stdout is not a terminal (-H: always). */
async function runInteractive(args: CliArgs): Promise<number> {
  if (!args.headless && process.stdin.isTTY && process.stdout.isTTY) {
    const { runUi } = await import('./ui/app.js');
    return await runUi(args);
  }
  if (args.forever !== undefined) throw new UsageError('-f/--forever needs the interactive UI (stdin and stdout a terminal)');
  if (args.resume && !args.fork) await (await import('./session-takeover.js')).takeOverIfAsked(args.resume, process, process.env);
  const { runRepl } = await import('./repl.js');
  return await runRepl(args, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    color: !!process.stdout.isTTY && !process.env.NO_COLOR,
  });
}

/** The arguments of a run with its prompt given (-o) and no command, the runs the one-shot program holds; else null. */
function plainOneshot(argv: string[]): CliArgs | null {
  try {
    const args = parseCommandLine(argv);
    return args.oneshot !== undefined && args.command === 'run' ? args : null;
  } catch {
    return null; // the whole program says what is wrong
  }
}

/** The whole program, from the launcher, for a run the one-shot program does not hold. */
function handOver(): void {
  const whole = (globalThis as Record<symbol, (() => void) | undefined>)[Symbol.for('clm.whole-program')];
  if (!whole) throw new Error('the one-shot program was started without bin/clm.cjs');
  whole();
}

function start(argv: string[], parsed: CliArgs | null): void {
  installSignalHandlers();
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') outputError ??= e;
  });
  process.stderr.on('error', () => {});
  main(argv, parsed).then(finish, (e) => {
    process.stderr.write(`clm: ${String(e)}\n`);
    process.exit(1);
  });
}

async function finish(result: number): Promise<void> {
  let code = result;
  process.exitCode = code;
  // A pipe takes 64 KiB at once; exiting before the rest is written would cut the reply short.
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  // A file's write fails synchronously but reports the error a tick later.
  await new Promise((r) => setImmediate(r));
  if (outputError) {
    process.stderr.write(`clm: cannot write the output: ${describeWriteError(outputError)}\n`);
    if (code === 0) code = 1;
    await flushed(process.stderr);
  }
  // Everything was closed above; stray handles (a keep-alive socket, a plugin worker still
  // starting) must not keep a finished run alive.
  process.exit(code);
}

const argv = process.argv.slice(2);
// The one-shot program reads the arguments once, here, to know whether the run is its own.
const oneshotArgs = process.env.CLM_PROGRAM === 'oneshot' ? plainOneshot(argv) : null;
if (process.env.CLM_PROGRAM !== 'oneshot' || oneshotArgs) start(argv, oneshotArgs);
else handOver();
