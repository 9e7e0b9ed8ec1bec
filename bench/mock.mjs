// The bench's mock LLM (bench/mock-server.mjs) started in its own process, so its CPU is never
// the measured program's, with its side doors as calls. Shared by every bench script.
//
//   const m = await startMock('text');            // or 'plan', 'read_file:10' with a fixture, …
//   m.url                                          // http://127.0.0.1:PORT/v1, for clm -u
//   await m.plan(['Hello', ' world'], 5)           // `plan` mode: the next replies' deltas, 5 ms apart
//   await m.call('GET', '/__stats')                // the counters; POST /__reset zeroes them
//   m.stop()

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quietEnv } from './measure.mjs';

const SERVER = join(dirname(fileURLToPath(import.meta.url)), 'mock-server.mjs');
const running = new Set();
process.on('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

/** Start the mock in `mode` (see mock-server.mjs); resolves once it listens. */
export function startMock(mode, fixture) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVER, mode, ...(fixture ? [fixture] : [])], {
      env: quietEnv(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    running.add(child);
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      const port = /^(\d+)\n/.exec(out)?.[1];
      if (!port) return;
      child.stdout.removeAllListeners('data');
      // The mock never keeps a bench script alive: it goes with the script (the exit handler above).
      child.stdout.destroy();
      child.unref();
      const base = `http://127.0.0.1:${port}`;
      const call = async (method, path, body) => {
        const r = await fetch(`${base}${path}`, { method, ...(body ? { body: JSON.stringify(body) } : {}) });
        return r.json();
      };
      resolve({
        mode,
        child,
        base,
        url: `${base}/v1`,
        call,
        plan: (parts, everyMs = 0) => call('POST', '/__plan', { parts, everyMs }),
        stop: () => {
          running.delete(child);
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        },
      });
    });
    child.on('exit', (code) => reject(new Error(`mock server (${mode}) exited with ${code} before listening`)));
    child.on('error', reject);
  });
}
