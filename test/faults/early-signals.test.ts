// Fault battery, signals while clm starts: from the moment its handlers are in place (the
// launcher's first statement, or the bundle's), SIGINT, SIGTERM and SIGHUP at any point of the
// start-up — loading, config.lua in its worker, the first request — end clm with 130, 143 or 129,
// never by the raw signal, and json and stream-json print the result object they promise.
// Points are taken after the handlers are seen installed (/proc/PID/status: SIGHUP caught), so
// what a case checks does not depend on how fast the machine is; Node's own start before that
// is out of any program's reach.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BIN, CLI, show, waitFor } from '../fixtures/run-cli.js';
import { jsonLines } from '../fixtures/cli-suite.js';
import { faultSuite } from '../fixtures/fault-suite.js';
import { handlersInPlace } from '../fixtures/processes.js';
import { tally } from '../fixtures/tally.js';

const { mock, spawn } = await faultSuite({ script: () => ({ hang: true }) });

const CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
type Sig = keyof typeof CODES;
/** Milliseconds after the handlers are in place. */
const POINTS = [0, 5, 15, 30, 60, 100, 150, 200];

async function signalAt(entry: string, format: 'json' | 'stream-json' | 'text', sig: Sig, ms: number) {
  const c = spawn(['-o', 'hi', '--output-format', format], { entry, timeoutMs: 60_000 });
  await waitFor(() => handlersInPlace(c.child.pid!) || c.child.exitCode !== null, 'the signal handlers', 30_000);
  await new Promise((r) => setTimeout(r, ms));
  c.child.kill(sig);
  return c.result;
}

for (const [label, entry] of [
  ['bin/clm.cjs', BIN],
  ['dist/cli.js', CLI],
] as const) {
  for (const sig of Object.keys(CODES) as Sig[]) {
    test(`${label}: ${sig} at ${POINTS.join(', ')} ms into the start: exit ${CODES[sig]} and the json result each time`, async () => {
      const results = await Promise.all(POINTS.map((ms) => signalAt(entry, 'json', sig, ms)));
      for (const [i, r] of results.entries()) {
        const at = `${sig} at ${POINTS[i]} ms: ${show(r)}`;
        assert.equal(r.code, CODES[sig], at);
        const o = JSON.parse(r.stdout);
        assert.equal(o.type, 'result', at);
        assert.equal(o.status, 'cancelled', at);
        assert.equal(o.exit_code, CODES[sig], at);
        if (sig !== 'SIGINT') {
          assert.equal(o.error, `ended by ${sig}`, at);
          assert.match(r.stderr, new RegExp(`^clm: ended by ${sig}$`, 'm'), at);
        }
      }
      tally('faults', POINTS.length);
    });
  }
}

test('stream-json: a signal while starting or during the first request ends with the result line', async () => {
  const results = await Promise.all(POINTS.map((ms, i) => signalAt(BIN, 'stream-json', (Object.keys(CODES) as Sig[])[i % 3]!, ms)));
  for (const [i, r] of results.entries()) {
    const sig = (Object.keys(CODES) as Sig[])[i % 3]!;
    const at = `${sig} at ${POINTS[i]} ms: ${show(r)}`;
    assert.equal(r.code, CODES[sig], at);
    const lines = jsonLines(r.stdout);
    // Alone while starting; after `start` and the turn's events once start-up is over.
    assert.ok(lines.length === 1 || lines[0].type === 'start', at);
    assert.deepEqual(
      lines.filter((l) => l.type === 'result'),
      [lines.at(-1)],
      at,
    );
    assert.equal(lines.at(-1)?.exit_code, CODES[sig], at);
  }
  tally('faults', POINTS.length);
});

test('text: a signal while starting ends clm with its exit status, stdout empty', async () => {
  const results = await Promise.all(POINTS.map((ms, i) => signalAt(BIN, 'text', (Object.keys(CODES) as Sig[])[i % 3]!, ms)));
  for (const [i, r] of results.entries()) {
    const sig = (Object.keys(CODES) as Sig[])[i % 3]!;
    assert.equal(r.code, CODES[sig], `${sig} at ${POINTS[i]} ms: ${show(r)}`);
    assert.equal(r.stdout, '');
  }
  assert.ok(mock.posts.length <= POINTS.length);
  tally('faults', POINTS.length);
});
