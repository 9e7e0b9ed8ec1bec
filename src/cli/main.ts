// clm(1): dispatch on flags. Heavy modules (Lua, MCP, config) are imported only by the paths
// that need them, so `clm -V` and a plain one-shot start fast.

import { CLM_VERSION } from '../host/version.js';
import { parseArgs, USAGE, UsageError } from './args.js';
import { installSignalHandlers } from './signals.js';

async function main(argv: string[]): Promise<number> {
  installSignalHandlers();
  let args;
  try {
    args = parseArgs(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`clm: ${e.message}\n${USAGE}`);
      return 2;
    }
    throw e;
  }
  if (args.command === 'version') { process.stdout.write(`clm ${CLM_VERSION}\n`); return 0; }
  if (args.command === 'help') { process.stdout.write(USAGE); return 0; }
  const color = !!process.stderr.isTTY && !process.env.NO_COLOR;
  const { CliError } = await import('./runtime.js');
  const { ConfigProblem } = await import('./resolve.js');
  try {
    if (args.command === 'setup') {
      const { runSetupCommand } = await import('./setup.js');
      return runSetupCommand(process.stdout, process.stderr);
    }
    if (args.oneshot === undefined && args.outputFormat !== 'text') throw new UsageError(`--output-format ${args.outputFormat} needs -o PROMPT (the REPL prints text)`);
    if (args.oneshot !== undefined) {
      if (args.resume === '') throw new UsageError('-r without an id needs the REPL; give the session id with -o');
      const { runOneshot } = await import('./oneshot.js');
      return await runOneshot(args, { stdout: process.stdout, stderr: process.stderr, color, stdin: process.stdin });
    }
    if (!args.headless && process.stdin.isTTY && process.stdout.isTTY) {
      const { runUi } = await import('./ui/app.js');
      return await runUi(args);
    }
    if (args.forever !== undefined) throw new UsageError('-f/--forever needs the interactive UI (stdin and stdout a terminal)');
    const { runRepl } = await import('./repl.js');
    return await runRepl(args, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, color: !!process.stdout.isTTY && !process.env.NO_COLOR });
  } catch (e) {
    if (e instanceof UsageError) { process.stderr.write(`clm: ${e.message}\n${USAGE}`); return 2; }
    if (e instanceof ConfigProblem) { process.stderr.write(`clm: ${e.message}\n`); return 2; }
    if (e instanceof CliError) { process.stderr.write(`clm: ${e.message}\n`); return e.exitCode; }
    const name = (e as { name?: string })?.name;
    if (name === 'SessionError') { process.stderr.write(`clm: ${(e as Error).message}\n`); return 1; }
    process.stderr.write(`clm: ${(e as Error)?.stack ?? String(e)}\n`);
    return 1;
  }
}

// A reader that goes away (`clm -o … | head`) must not crash the run with an EPIPE stack trace:
// the turn finishes, the session is written, the output is simply lost.
for (const s of [process.stdout, process.stderr]) s.on('error', () => {});

/** Resolves once everything written to `s` so far has been handed to the OS (or `s` failed). */
function flushed(s: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (!s.writableLength || s.destroyed) resolve();
    else s.write('', () => resolve());
  });
}

main(process.argv.slice(2)).then(
  async (code) => {
    process.exitCode = code;
    // A pipe takes 64 KiB at once; exiting before the rest is written would cut the reply short.
    await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
    // Everything was closed above; stray handles (a keep-alive socket, a plugin worker still
    // starting) must not keep a finished run alive.
    process.exit(code);
  },
  (e) => { process.stderr.write(`clm: ${String(e)}\n`); process.exit(1); },
);
