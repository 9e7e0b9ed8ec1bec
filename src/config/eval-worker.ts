// The config evaluator's worker thread: one Lua state that runs secrets.lua, config.lua and a
// profile in order, off the main thread, so the main thread can stop it (evaluator.ts) when a
// single C-level call such as string.find with a pathological pattern never returns — and
// SIGTERM and Ctrl-C keep working while it runs.

import { parentPort } from 'node:worker_threads';
import { format } from 'node:util';
import { ConfigLua } from './lua-state.js';
import type { EvalReply, EvalRequest } from './eval-protocol.js';

const port = parentPort;
if (!port) throw new Error('config evaluator: must run as a worker thread');

// Nothing here may write to the terminal (an emscripten abort prints): lines go to the debug log.
const forward = (...args: unknown[]) => {
  const line = format(...args).trimEnd();
  if (line) port.postMessage({ t: 'log', line: `config worker: ${line}` } satisfies EvalReply);
};
console.log = console.info = console.warn = console.error = console.debug = console.trace = forward;

const send = (m: EvalReply) => port.postMessage(m);

ConfigLua.create().then(
  (lua) => {
    port.on('message', (m: EvalRequest) => {
      try {
        send({ t: 'result', id: m.id, outcome: lua.run(m.source, m.chunkName, m.opts) });
      } catch (e) {
        send({ t: 'result', id: m.id, outcome: { ok: false, message: `internal error: ${(e as Error)?.message ?? String(e)}` } });
      }
    });
    send({ t: 'ready' });
  },
  (e: unknown) => send({ t: 'failed', message: (e as Error)?.message ?? String(e) }),
);
