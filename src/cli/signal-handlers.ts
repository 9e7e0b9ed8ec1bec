// Signals for the whole program, in place before anything else starts (main.ts installs them as
// its first statement; bin/clm.cjs holds the signals that arrive while the program loads and
// hands them over here). Ctrl-C goes to the current mode's handler (cancel the turn) or, when none
// is set (starting up, shutting down), ends the program; SIGTERM and SIGHUP end it, through the
// current mode's handler when it has one (the interactive UI closes its session first). Where no
// mode handles a signal, the fallback ends the program: a one-shot run with a result object sets
// one that prints it. Ending goes through process.exit, so the 'exit' hooks (stop every tool
// process group, MCP servers) run: Node's default action would kill clm and leave them behind.

export type EndSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** The exit status a signal ends clm with (128 + its number). */
export const SIGNAL_EXIT_CODES: Readonly<Record<EndSignal, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

let interrupt: (() => void) | null = null;
let terminate: ((signal: 'SIGTERM' | 'SIGHUP', code: number) => void) | null = null;
let fallback: ((signal: EndSignal, code: number) => void) | null = null;

/** The current Ctrl-C handler; null ⇒ the fallback ends the program (130). */
export function onInterrupt(fn: (() => void) | null): void {
  interrupt = fn;
}

/** The current SIGTERM/SIGHUP handler, which must end the process with `code`; null ⇒ the fallback ends it. */
export function onTerminate(fn: ((signal: 'SIGTERM' | 'SIGHUP', code: number) => void) | null): void {
  terminate = fn;
}

/**
 * How a signal no mode handles ends the program (it must exit with `code`); null ⇒ at once,
 * saying so on stderr for SIGTERM and SIGHUP, so a log of the run shows why it stopped where it did.
 */
export function onUnhandledSignal(fn: ((signal: EndSignal, code: number) => void) | null): void {
  fallback = fn;
}

function unhandled(signal: EndSignal): void {
  const code = SIGNAL_EXIT_CODES[signal];
  if (fallback) return fallback(signal, code);
  if (signal !== 'SIGINT') process.stderr.write(`clm: ended by ${signal}\n`);
  process.exit(code);
}

function received(signal: EndSignal): void {
  if (signal === 'SIGINT') return interrupt ? interrupt() : unhandled(signal);
  return terminate ? terminate(signal, SIGNAL_EXIT_CODES[signal]) : unhandled(signal);
}

/** What bin/clm.cjs leaves for the program: the signals it held while the program loaded. */
interface HeldSignals {
  signals: EndSignal[];
  release(): void;
}
const HELD = Symbol.for('clm.held-signals');

export function installSignalHandlers(): void {
  for (const s of Object.keys(SIGNAL_EXIT_CODES) as EndSignal[]) process.on(s, () => received(s));
  // From here the handlers above answer; bin/clm.cjs stops holding.
  (globalThis as { [HELD]?: HeldSignals })[HELD]?.release();
}

/**
 * Act on the signals that arrived while the program loaded, as if they came now. Called once
 * the output format is known (and with it how a signal ends the run).
 */
export function takeHeldSignals(): void {
  const held = (globalThis as { [HELD]?: HeldSignals })[HELD];
  if (!held) return;
  delete (globalThis as { [HELD]?: HeldSignals })[HELD];
  for (const s of held.signals.splice(0)) received(s);
}
