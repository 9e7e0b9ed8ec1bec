// The config evaluator's worker thread: one Lua state that runs secrets.lua, config.lua and a
// profile in order (and, for the evaluation cache, two more where the secrets are sentinels
// sorting high and low), off the main thread, so the main thread can stop it (evaluator.ts)
// when a single C-level call such as string.find with a pathological pattern never returns —
// and SIGTERM and Ctrl-C keep working while it runs.

import { parentPort } from 'node:worker_threads';
import { format } from 'node:util';
import { ConvertError } from './errors.js';
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
    // A state of its own for each set of sentinel secrets (opts.probe), made on first use (a
    // worker serves one load, which uses two sets).
    const probes = new Map<string, ConfigLua>();
    const stateFor = (marker: string | undefined): ConfigLua => {
      if (marker === undefined) return lua;
      let p = probes.get(marker);
      if (!p) {
        p = lua.sibling();
        p.watchSecrets(marker);
        probes.set(marker, p);
      }
      return p;
    };
    port.on('message', (m: EvalRequest) => {
      try {
        send({ t: 'result', id: m.id, outcome: stateFor(m.opts.probe).run(m.source, m.chunkName, m.opts) });
      } catch (e) {
        if (e instanceof ConvertError) send({ t: 'result', id: m.id, convert: { keyPath: e.keyPath, message: e.message } });
        else send({ t: 'result', id: m.id, outcome: { ok: false, message: `internal error: ${(e as Error)?.message ?? String(e)}` } });
      }
    });
    send({ t: 'ready' });
  },
  (e: unknown) => send({ t: 'failed', message: (e as Error)?.message ?? String(e) }),
);
