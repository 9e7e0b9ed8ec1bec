// The main-thread watchdog: a single runaway C call (a pathological pattern) cannot be stopped
// by the count hook, so the worker is terminated and restarted. Only the culprit's call fails
// with a clear message; other in-flight calls fail with a retryable error; the plugins come back;
// the main event loop never stalls.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadPlugins } from '../../src/lua/index.js';
import { fixtures, ok, invoke, start, sleep } from './helpers.js';

// Well above a time slice (20 ms) even on a loaded machine; the default is 1000.
const WATCHDOG_MS = 500;
const RUNAWAY =
  /^plugin evil: a single Lua library call \(e\.g\. string\.find or string\.match with a pathological pattern\) ran for \d+\.\d s without yielding; the call was aborted$/;
const RETRYABLE = 'aborted: the plugin host was restarted (another plugin call ran away); this call may be retried';

test('runaway patterns: the culprit fails, the others retry, the plugins come back, the loop never stalls', {
  timeout: 60_000,
}, async () => {
  const logs: string[] = [];
  const host = await loadPlugins({ dirs: [join(fixtures, 'lua-watchdog')], watchdogMs: WATCHDOG_MS, log: (l) => logs.push(l) });
  try {
    assert.deepEqual(host.errors, []);
    assert.equal(await ok(host, 'good_count'), '1');

    const inFlight = start(host, 'good_sleep', { ms: 10_000 });
    await sleep(20);
    // Main-thread timers keep firing while the runaway call spins (at least WATCHDOG_MS): a
    // main loop blocked until the watchdog fired would get at most the one tick already due.
    let ticks = 0;
    const probe = setInterval(() => {
      ticks++;
    }, 10);
    const evil = await invoke(host, 'evil_find');
    clearInterval(probe);

    assert.equal(evil.ok, false);
    assert.match(evil.ok ? '' : evil.error, RUNAWAY);
    const ranFor = Number(/ran for (\d+\.\d) s/.exec(evil.ok ? '' : evil.error)![1]);
    assert.ok(ranFor >= WATCHDOG_MS / 1000 - 0.05, `reported after ${ranFor} s, before the watchdog's ${WATCHDOG_MS} ms`);
    assert.ok(ticks >= 5, `the main event loop ran ${ticks} timer ticks while the call ran away`);
    // Caught long before the other call's 10 s sleep ended: that call was aborted, not finished.
    assert.deepEqual(await inFlight.result, { ok: false, error: RETRYABLE });
    assert.ok(logs.some((l) => l.includes('restarting the plugin host')));

    // A fresh worker: every plugin reloaded (its state starts over) and serving.
    assert.equal(await ok(host, 'good_count'), '1');
    assert.equal(await ok(host, 'evil_ok'), 'evil is fine');

    // The trim idiom on long whitespace is caught the same way.
    const trim = await invoke(host, 'evil_trim', { text: `a${' '.repeat(40_000)}b` });
    assert.match(trim.ok ? '' : trim.error, RUNAWAY);
    assert.equal(await ok(host, 'good_count'), '1');

    // The third runaway disables the plugin; the others keep working.
    const third = await invoke(host, 'evil_find');
    assert.match(third.ok ? '' : third.error, RUNAWAY);
    const disabled = await invoke(host, 'evil_ok');
    assert.deepEqual(disabled, { ok: false, error: "tool 'evil_ok' is disabled: its plugin ran away too often" });
    assert.ok(logs.some((l) => l.includes('disabled after 3 runaway calls')));
    assert.equal(await ok(host, 'good_count'), '1');
  } finally {
    await host.close();
  }
});

test('a runaway at load time drops that plugin; the rest load', { timeout: 30_000 }, async () => {
  const host = await loadPlugins({ dirs: [join(fixtures, 'lua-watchdog-load')], watchdogMs: WATCHDOG_MS });
  try {
    assert.deepEqual(
      host.tools.map((t) => t.name),
      ['fine_tool'],
    );
    assert.equal(host.errors.length, 1);
    assert.equal(host.errors[0].plugin, 'a_evil_load');
    assert.match(host.errors[0].message, /^load aborted: a single Lua library call .* without yielding$/);
    assert.equal(await ok(host, 'fine_tool'), 'fine');
  } finally {
    await host.close();
  }
});

test('a long C call on a starved machine is no runaway: the watchdog counts CPU time too', { timeout: 60_000 }, async () => {
  // A 2 MiB json.decode is one C call of ~200 ms CPU. A loaded machine stretches it past the
  // watchdog in wall time while the process gets little CPU; a clock standing still plays that.
  const starved = await loadPlugins({ dirs: [join(fixtures, 'lua-json')], watchdogMs: 20, cpuClock: () => 0 });
  try {
    assert.equal(await ok(starved, 'decode_big'), '2097150 | nil, json.decode: input too large (2097153 > 2097152 bytes)');
  } finally {
    await starved.close();
  }
  // With the CPU clock running as fast as the wall clock, a call that never returns is caught.
  const busy = await loadPlugins({ dirs: [join(fixtures, 'lua-watchdog')], watchdogMs: 20, cpuClock: () => performance.now() });
  try {
    const r = await invoke(busy, 'evil_find');
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.error, RUNAWAY);
  } finally {
    await busy.close();
  }
});
