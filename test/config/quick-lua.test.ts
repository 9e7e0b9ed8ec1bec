// The quick Lua state on the main thread: it gives up (NeedsWorker, which no pcall catches)
// before a library call that could run on inside C and once a chunk runs past QUICK_MS, also
// when that time goes into a few costly instructions; loadConfig then evaluates the files in the
// worker, with the same result and each warning once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NeedsWorker } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { ConfigLua } from '../../src/config/lua-state.js';
import { tempFor, withoutMoves } from './helpers.js';

const bytes = (s: string) => new TextEncoder().encode(s);

test('a quick state gives up on calls that can run on inside C, also under pcall', async () => {
  for (const call of [
    'string.find("aaa", "a*b")',
    'pcall(string.match, "a", "a")',
    '("x"):rep(3)',
    'pcall(string.gsub, "a", "a", "b")',
    'string.gmatch("a", "a")',
    'table.sort({ 2, 1 })',
    'pcall(table.move, {}, 1, 2 ^ 53, 2)',
  ]) {
    const lua = await ConfigLua.create({ quick: true });
    assert.throws(() => lua.run(bytes(`local x = ${call}\nreturn {}`), '=config.lua'), NeedsWorker, call);
    assert.throws(() => lua.run(bytes('return {}'), '=config.lua'), NeedsWorker, 'a state that gave up stays given up');
  }
});

test('a quick state gives up after QUICK_MS: an endless loop, and costly instructions between two hooks', async () => {
  const loop = await ConfigLua.create({ quick: true });
  assert.throws(() => loop.run(bytes('while true do end'), '=config.lua'), /config\.lua runs longer than 100 ms/);
  // Fewer instructions than the hook counts (about 7 a round), each round copying 8 MiB.
  const copies = await ConfigLua.create({ quick: true });
  const src = 'local b = "x" for i = 1, 23 do b = b .. b end\nlocal n = 0 for i = 1, 1000 do n = n + #(b .. i) end\nreturn { n = n }';
  assert.throws(() => copies.run(bytes(src), '=config.lua'), /config\.lua runs longer than 100 ms/);
});

test('the Lua instance without the wasmoon glue: values, errors through pcall (longjmp), the memory cap, heap growth', async () => {
  const lua = await ConfigLua.create({ memoryLimit: 1 << 20 });
  assert.deepEqual(lua.run(bytes('return { a = { 1, 2 }, s = "x" .. 1 }'), '=config.lua'), {
    ok: true,
    value: { a: [1, 2], s: 'x1' },
    luaType: 'table',
  });
  assert.deepEqual(lua.run(bytes('local t = nil\nreturn t.x'), '=config.lua'), {
    ok: false,
    message: "config.lua:2: attempt to index a nil value (local 't')",
  });
  assert.deepEqual(lua.run(bytes('local ok, e = pcall(error, "inner")\nerror("outer: " .. e, 0)'), '=config.lua'), {
    ok: false,
    message: 'outer: inner',
  });
  assert.deepEqual(lua.run(bytes('local s = "x" for i = 1, 30 do s = s .. s end'), '=config.lua'), {
    ok: false,
    message: 'not enough memory',
  });
  // The wasm heap grows past its initial 2 MiB for a state with the full cap.
  const big = await ConfigLua.create();
  assert.deepEqual(big.run(bytes('local s = "x" for i = 1, 24 do s = s .. s end return { n = #s }'), '=config.lua'), {
    ok: true,
    value: { n: 2 ** 24 },
    luaType: 'table',
  });
});

/** The debug-log lines saying the quick state gave up; on a busy machine it can also be for time. */
const gaveUp = (log: string[]) => log.filter((l) => l.endsWith('; evaluating in the worker thread'));
const forTime = /^config: \S+ runs longer than 100 ms; evaluating in the worker thread$/;

test('loadConfig: what the quick state gives up on comes from the worker, the same, its warnings once', async (t) => {
  const c = tempFor(t, {
    'secrets.lua': 'return { k = "sk-quick-0123" }',
    'config.lua': 'local ok = pcall(string.find, "abc", "b")\nreturn { model = tostring(ok) .. "/" .. clm.secrets.k, oops = 1 }',
  });
  const log: string[] = [];
  const cfg = await loadConfig({ dir: c.dir, log: (l) => log.push(l) });
  // A pcall that caught the quick state giving up would have made ok false.
  assert.equal(cfg?.model, 'true/sk-quick-0123');
  assert.deepEqual(cfg?.warnings, ['config.lua: unknown key oops (ignored)']);
  assert.equal(gaveUp(log).length, 1, log.join('\n'));
  assert.match(
    gaveUp(log)[0]!,
    /^config: config\.lua calls string\.find; evaluating in the worker thread$|^config: \S+ runs longer than 100 ms;/,
  );
  assert.deepEqual(withoutMoves(log), ['config.lua: unknown key oops (ignored)']);

  // Given up in the profile, after config.lua's warning: the warning is still logged once.
  c.write('config.lua', 'return { model = clm.secrets.k, oops = 1 }');
  c.write('agents/p.lua', 'return { system_prompt = ("-"):rep(3) }');
  log.length = 0;
  const p = await loadConfig({ dir: c.dir, agent: 'p', log: (l) => log.push(l) });
  assert.equal(p?.systemPrompt, '---');
  assert.equal(gaveUp(log).length, 1, log.join('\n'));
  assert.match(
    gaveUp(log)[0]!,
    /^config: agents\/p\.lua calls string\.rep; evaluating in the worker thread$|^config: \S+ runs longer than 100 ms;/,
  );
  assert.deepEqual(withoutMoves(log), ['config.lua: unknown key oops (ignored)']);

  // Nothing to give up on for a call.
  c.write('agents/p.lua', 'return { system_prompt = "---" }');
  log.length = 0;
  assert.equal((await loadConfig({ dir: c.dir, agent: 'p', log: (l) => log.push(l) }))?.systemPrompt, '---');
  for (const l of gaveUp(log)) assert.match(l, forTime);
  assert.deepEqual(withoutMoves(log), ['config.lua: unknown key oops (ignored)']);
});
