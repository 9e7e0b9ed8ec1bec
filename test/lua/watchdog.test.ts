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
const RUNAWAY = /^plugin evil: a single Lua library call \(e\.g\. string\.find or string\.match with a pathological pattern\) ran for \d+\.\d s without yielding; the call was aborted$/;
const RETRYABLE = 'aborted: the plugin host was restarted (another plugin call ran away); this call may be retried';

test('runaway patterns: the culprit fails, the others retry, the plugins come back, the loop never stalls', { timeout: 60_000 }, async () => {
  const logs: string[] = [];
  const host = await loadPlugins({ dirs: [join(fixtures, 'lua-watchdog')], watchdogMs: WATCHDOG_MS, log: (l) => logs.push(l) });
  try {
    assert.deepEqual(host.errors, []);
    assert.equal(await ok(host, 'good_count'), '1');

    let maxGap = 0;
    let prev = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - prev);
      prev = now;
    }, 10);
    const inFlight = start(host, 'good_sleep', { ms: 10_000 });
    await sleep(20);
    const t0 = performance.now();
    const evil = await invoke(host, 'evil_find');
    const took = performance.now() - t0;
    clearInterval(probe);

    assert.equal(evil.ok, false);
    assert.match(evil.ok ? '' : evil.error, RUNAWAY);
    assert.ok(took < 10_000, `detected after ${took} ms`);
    assert.ok(maxGap < 1000, `main loop stalled for ${maxGap} ms`);
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
    assert.deepEqual(host.tools.map((t) => t.name), ['fine_tool']);
    assert.equal(host.errors.length, 1);
    assert.equal(host.errors[0].plugin, 'a_evil_load');
    assert.match(host.errors[0].message, /^load aborted: a single Lua library call .* without yielding$/);
    assert.equal(await ok(host, 'fine_tool'), 'fine');
  } finally {
    await host.close();
  }
});
