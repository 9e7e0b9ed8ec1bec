// Signals for the whole program. Ctrl-C goes to the current mode's handler (cancel the turn) or,
// when none is set (starting up, shutting down), ends the program; SIGTERM and SIGHUP end it,
// through the current mode's handler when it has one (the interactive UI closes its session
// first). Ending goes through process.exit, so the 'exit' hooks (stop every tool process group,
// MCP servers) run: Node's default action would kill clm and leave them behind.

let interrupt: (() => void) | null = null;
let terminate: ((signal: 'SIGTERM' | 'SIGHUP', code: number) => void) | null = null;

/** The current Ctrl-C handler; null ⇒ Ctrl-C exits with 130. */
export function onInterrupt(fn: (() => void) | null): void {
  interrupt = fn;
}

/** The current SIGTERM/SIGHUP handler, which must end the process with `code`; null ⇒ exit at once. */
export function onTerminate(fn: ((signal: 'SIGTERM' | 'SIGHUP', code: number) => void) | null): void {
  terminate = fn;
}

export function installSignalHandlers(): void {
  process.on('SIGINT', () => (interrupt ? interrupt() : process.exit(130)));
  // Without a handler it is said on stderr, so a log of the run shows why it stopped where it did.
  const ended = (signal: 'SIGTERM' | 'SIGHUP', code: number) => {
    if (terminate) {
      terminate(signal, code);
      return;
    }
    process.stderr.write(`clm: ended by ${signal}\n`);
    process.exit(code);
  };
  process.on('SIGTERM', () => ended('SIGTERM', 143));
  process.on('SIGHUP', () => ended('SIGHUP', 129));
}
