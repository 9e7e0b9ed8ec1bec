// Loading the configuration always ends: a FIFO or device in place of a file is an error, a
// pattern bomb (one C-level string.find that would run for ages) is stopped from outside the
// Lua state, and the main event loop keeps running meanwhile (so signals are handled).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig, selectAgent } from '../../src/config/index.js';
import { tally } from '../fixtures/tally.js';
import { tempFor } from './helpers.js';

const BOMB = 'string.find(string.rep("a", 40) .. "b", string.rep("a*", 30) .. "c")';

async function loadError(p: Promise<unknown>): Promise<ConfigError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected ConfigError, got ${(e as Error)?.stack ?? e}`);
    return e;
  }
  assert.fail('loading did not fail');
}

test('config.lua as a FIFO or a link to /dev/zero: an error naming the file, no hang', async (t) => {
  const c = tempFor(t);
  execFileSync('mkfifo', [join(c.dir, 'config.lua')]);
  const e = await loadError(loadConfig({ dir: c.dir }));
  assert.match(e.message, /^config\.lua: .*config\.lua is not a regular file/);
  const d = tempFor(t);
  symlinkSync('/dev/zero', join(d.dir, 'config.lua'));
  assert.match((await loadError(loadConfig({ dir: d.dir }))).message, /is not a regular file/);
  tally('faults', 2);
});

test('secrets.lua as a FIFO: a warning, the config still loads', async (t) => {
  const c = tempFor(t, { 'config.lua': 'return { model = "m" }' });
  execFileSync('mkfifo', [join(c.dir, 'secrets.lua')]);
  const cfg = await loadConfig({ dir: c.dir });
  assert.equal(cfg?.model, 'm');
  assert.deepEqual(cfg?.secrets, {});
  assert.ok(
    cfg?.warnings.some((w) => /^secrets\.lua: .* is not a regular file \(a FIFO or device is never read\); clm\.secrets is empty$/.test(w)),
    String(cfg?.warnings),
  );
  tally('faults', 1);
});

test('an agent profile file that is a FIFO is an error, not a hang', async (t) => {
  const c = tempFor(t, { 'config.lua': 'return {}' });
  execFileSync('mkfifo', [join(c.dir, 'agents.fifo')]);
  c.write('agents/.keep', '');
  symlinkSync(join(c.dir, 'agents.fifo'), join(c.dir, 'agents', 'p.lua'));
  assert.match((await loadError(loadConfig({ dir: c.dir, agent: 'p' }))).message, /^agents\/p\.lua: .* is not a regular file/);
  tally('faults', 1);
});

test('a pattern bomb in config.lua is stopped: a clear error, and the event loop kept running', async (t) => {
  const c = tempFor(t, { 'config.lua': `local x = ${BOMB}\nreturn { model = "m" }` });
  let ticks = 0;
  const iv = setInterval(() => {
    ticks++;
  }, 20);
  try {
    const e = await loadError(loadConfig({ dir: c.dir, budgetMs: 200 }));
    assert.match(e.message, /^config\.lua: evaluation took longer than 200 ms and was stopped \(stuck inside one library call/);
    assert.equal(e.file, join(c.dir, 'config.lua'));
  } finally {
    clearInterval(iv);
  }
  // The old main-thread evaluation blocked every timer until the match ended.
  assert.ok(ticks > 0, 'timers ran while config.lua was evaluated');
  tally('faults', 1);
});

test('a pattern bomb in secrets.lua: a warning, clm.secrets empty, config.lua still loads', async (t) => {
  const c = tempFor(t, { 'secrets.lua': `${BOMB}\nreturn { k = "v" }`, 'config.lua': 'return { model = clm.secrets.k or "none" }' });
  const cfg = await loadConfig({ dir: c.dir, budgetMs: 200 });
  assert.equal(cfg?.model, 'none');
  assert.ok(
    cfg?.warnings.some((w) => /^secrets\.lua: evaluation took longer than 200 ms and was stopped/.test(w)),
    String(cfg?.warnings),
  );
  tally('faults', 1);
});

test('selectAgent: a profile file with a pattern bomb fails alone; the profile sees config.lua and secrets.lua', async (t) => {
  const c = tempFor(t, {
    'secrets.lua': 'return { k = "sek" }',
    'config.lua': 'base = "from-config"\nreturn { model = "top" }',
    'agents/ok.lua': 'return { model = base .. "-" .. clm.secrets.k }',
    'agents/bomb.lua': `${BOMB}\nreturn {}`,
  });
  const cfg = (await loadConfig({ dir: c.dir, budgetMs: 200 }))!;
  assert.equal((await selectAgent(cfg, 'ok')).model, 'from-config-sek');
  const e = await loadError(selectAgent(cfg, 'bomb'));
  assert.match(e.message, /^agents\/bomb\.lua: evaluation took longer than 200 ms and was stopped/);
  assert.equal((await selectAgent(cfg, 'ok')).model, 'from-config-sek', 'a later profile still loads');
  tally('faults', 1);
});

test('a syntax error in secrets.lua does not quote the secret', async (t) => {
  const c = tempFor(t, { 'secrets.lua': 'return {\n  openai = "sk-live-0123456789abcdef\n}', 'config.lua': 'return {}' });
  const log: string[] = [];
  const cfg = await loadConfig({ dir: c.dir, log: (l) => log.push(l) });
  const warning = cfg!.warnings.find((w) => w.startsWith('secrets.lua:'));
  assert.ok(warning, String(cfg!.warnings));
  assert.match(warning, /^secrets\.lua:2: unfinished string \(the text there is not shown: it may hold a secret\); clm\.secrets is empty$/);
  for (const text of [...cfg!.warnings, ...log]) assert.ok(!text.includes('sk-live'), text);
});

test('the connection and tool limit keys: whole numbers ≥ 0, passed through typed', async (t) => {
  const c = tempFor(t, {
    'config.lua':
      'return { probe_timeout_ms = 0, first_byte_timeout_ms = 9000, stream_idle_timeout_ms = 4000, max_reply_bytes = 1048576, max_parallel_tools = 2 }',
  });
  const cfg = await loadConfig({ dir: c.dir });
  assert.deepEqual(
    [cfg?.probeTimeoutMs, cfg?.firstByteTimeoutMs, cfg?.streamIdleTimeoutMs, cfg?.maxReplyBytes, cfg?.maxParallelTools],
    [0, 9000, 4000, 1048576, 2],
  );
  assert.deepEqual(cfg?.warnings, []);
  c.write('config.lua', 'return { max_reply_bytes = -1 }');
  assert.equal((await loadError(loadConfig({ dir: c.dir }))).message, 'config.lua:1: max_reply_bytes must be at least 0 (got -1)');
  c.write('config.lua', 'return { stream_idle_timeout_ms = 1.5 }');
  assert.equal(
    (await loadError(loadConfig({ dir: c.dir }))).message,
    'config.lua:1: stream_idle_timeout_ms must be a whole number (got 1.5)',
  );
});
