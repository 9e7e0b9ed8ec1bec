// clm(1): dispatch on flags. Heavy modules (Lua, MCP, config) are imported only by the paths
// that need them, so `clm -V` and a plain one-shot start fast. The signal handlers come first:
// from this module's first statement on, no signal ends clm by Node's default action.

import { installSignalHandlers, onUnhandledSignal, takeHeldSignals } from './signal-handlers.js';
import { forTerminal } from '../core/terminal-text.js';
import { CLM_VERSION } from '../host/version.js';
import { lazyBuiltin } from '../host/lazy-builtin.js';
import { parseCommandLine, USAGE, UsageError, usageErrorText, type CliArgs } from './args.js';
import { exitWithResult, signalSummary, Tally } from './run-summary.js';

installSignalHandlers();

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

async function main(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parseCommandLine>;
  try {
    args = parseCommandLine(argv);
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
    const { runCheckpointCommand } = await import('./checkpoint-commands.js');
    return runCheckpointCommand(args.checkpoint, {
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
      env: process.env,
    });
  }
  const color = !!process.stderr.isTTY && !process.env.NO_COLOR;
  const { CliError } = await import('./cli-error.js');
  const { ConfigProblem } = await import('./resolve-run.js');
  try {
    if (args.command === 'setup') {
      const { runSetupCommand } = await import('./setup.js');
      return runSetupCommand(process.stdout, process.stderr);
    }
    if (args.command === 'models') {
      const { runModelsCommand } = await import('./models-command.js');
      return await runModelsCommand(process.stdout, process.stderr, process.env);
    }
    if (args.command === 'permissions') {
      const { runPermissionsCommand } = await import('./permissions-command.js');
      return await runPermissionsCommand(args, process.env, process.stdout);
    }
    if (args.command === 'mcp') {
      const { runMcpCommand } = await import('./mcp-command.js');
      return await runMcpCommand(args, process.env, process.stdout, process.stderr);
    }
    if (args.command === 'sandbox-check') {
      const { runSandboxCheck } = await import('./sandbox-command.js');
      return await runSandboxCheck(args, process.stdout);
    }
    if (args.oneshot === undefined && args.outputFormat !== 'text')
      throw new UsageError(`--output-format ${args.outputFormat} needs -o PROMPT (the REPL prints text)`);
    if (args.oneshot !== undefined) {
      if (args.resume === '') throw new UsageError('-r without an id needs the REPL; give the session id with -o');
      const { runOneshot } = await import('./oneshot.js');
      // stdin only where a person can answer on it: for a file or /dev/null, creating
      // process.stdin builds a file stream, whose module pulls in fs/promises, readline and fs.watch.
      const stdin = lazyBuiltin<typeof import('node:tty')>('node:tty')().isatty(0) ? process.stdin : undefined;
      return await runOneshot(args, { stdout: process.stdout, stderr: process.stderr, color, stdin });
    }
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
  } catch (e) {
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
    if (name === 'SessionError') {
      say((e as Error).message);
      return 1;
    }
    say((e as Error)?.stack ?? String(e));
    return 1;
  }
}

// A reader that goes away (`clm -o … | head`) must not crash the run with an EPIPE stack trace:
// the turn finishes, the session is written, the output is simply lost. Any other failure to
// write the output (a full disk, an I/O error) makes the run fail: the result did not arrive.
let outputError: NodeJS.ErrnoException | undefined;
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') outputError ??= e;
});
process.stderr.on('error', () => {});

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

main(process.argv.slice(2)).then(
  async (result) => {
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
  },
  (e) => {
    process.stderr.write(`clm: ${String(e)}\n`);
    process.exit(1);
  },
);
