// Signals for the whole program. Ctrl-C goes to the current mode's handler (cancel the turn) or,
// when none is set (starting up, shutting down), ends the program; SIGTERM and SIGHUP end it.
// Ending goes through process.exit, so the 'exit' hooks (stop every tool process group, MCP
// servers) run: Node's default action would kill clm and leave them behind.

let interrupt: (() => void) | null = null;

/** The current Ctrl-C handler; null ⇒ Ctrl-C exits with 130. */
export function onInterrupt(fn: (() => void) | null): void {
  interrupt = fn;
}

export function installSignalHandlers(): void {
  process.on('SIGINT', () => (interrupt ? interrupt() : process.exit(130)));
  // Said on stderr, so a log of the run shows why it stopped where it did.
  process.on('SIGTERM', () => { process.stderr.write('clm: ended by SIGTERM\n'); process.exit(143); });
  process.on('SIGHUP', () => { process.stderr.write('clm: ended by SIGHUP\n'); process.exit(129); });
}
