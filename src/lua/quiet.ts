// Imported first by the worker: nothing in it may write to the terminal (emscripten prints on
// an abort; a TUI or a stdio protocol on the main thread would be corrupted). Console output
// becomes log lines for the host's log callback instead. (Capturing the worker's stdio streams
// on the main side would keep the process alive: Node refs the port behind them.)

import { parentPort } from 'node:worker_threads';
import { format } from 'node:util';
import type { ToMain } from './protocol.js';

function forward(...args: unknown[]): void {
  const text = format(...args).trimEnd();
  if (!text) return;
  const batch: ToMain[] = text.split('\n').map((line) => ({ t: 'log', line: `lua worker: ${line}` }));
  parentPort?.postMessage(batch);
}

console.log = console.info = console.warn = console.error = console.debug = console.trace = forward;
const write = (chunk: unknown): boolean => {
  forward(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
  return true;
};
process.stdout.write = write as typeof process.stdout.write;
process.stderr.write = write as typeof process.stderr.write;
