// config.lua and secrets.lua evaluation: the Lua state, errors with file and line, the guard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { tempFor, withoutMoves } from './helpers.js';

async function loadError(dir: string, opts: { budgetMs?: number } = {}): Promise<ConfigError> {
  try {
    await loadConfig({ dir, ...opts });
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected ConfigError, got ${e}`);
    return e;
  }
  assert.fail('loadConfig did not throw');
}

test('no config.lua ⇒ null; no config dir at all ⇒ null', async (t) => {
  const c = tempFor(t);
  assert.equal(await loadConfig({ dir: c.dir }), null);
  assert.equal(await loadConfig({ env: {} }), null);
});

test('default dir: $XDG_CONFIG_HOME/clm, else $HOME/.config/clm', async (t) => {
  const c = tempFor(t, { 'config.lua': 'return { model = "m1" }' });
  assert.equal((await loadConfig({ env: { XDG_CONFIG_HOME: c.xdg, HOME: '/nonexistent' } }))?.model, 'm1');
  const h = tempFor(t);
  h.write('../.config/clm/config.lua', 'return { model = "m2" }');
  assert.equal((await loadConfig({ env: { XDG_CONFIG_HOME: '', HOME: h.xdg } }))?.model, 'm2');
});

test('config.lua returning a table: typed values, raw table, Lua tables converted to JS', async (t) => {
  const c = tempFor(t, {
    'config.lua': `
      local base = "https://api.example.com"
      return {
        model = "ex/big-model",
        system_prompt = "be " .. string.upper("brief"),
        providers = { ex = { kind = "anthropic", url = base .. "/v1", rate_tokens_per_sec = 100, rate_burst = 2000 } },
        volatile_tools = { "cdda_*", "state" },
        tools = { weather = { units = "metric", cities = { "Oslo", "Lima" }, n = 3, ratio = 0.5, on = true } },
        mcp_servers = { { name = "fs", command = { "npx", "server" }, timeout_ms = 5000 } },
        custom = { [1] = "a", [3] = "c", x = math.maxinteger > 0 },
      }`,
  });
  const cfg = await loadConfig({ dir: c.dir });
  assert.ok(cfg);
  assert.equal(cfg.model, 'ex/big-model');
  assert.equal(cfg.systemPrompt, 'be BRIEF');
  assert.deepEqual(cfg.providers.ex, {
    name: 'ex',
    kind: 'anthropic',
    url: 'https://api.example.com/v1',
    rateTokensPerSec: 100,
    rateBurst: 2000,
    models: {},
  });
  assert.deepEqual(cfg.volatileTools, ['cdda_*', 'state']);
  assert.deepEqual(cfg.tools, { weather: { cities: ['Oslo', 'Lima'], n: 3, on: true, ratio: 0.5, units: 'metric' } });
  assert.deepEqual(cfg.mcpServers, [{ command: ['npx', 'server'], name: 'fs', timeout_ms: 5000 }]);
  // keys not 1..n ⇒ object with string keys
  assert.deepEqual(cfg.raw.custom, { 1: 'a', 3: 'c', x: true });
  assert.equal(cfg.showThinking, false);
  assert.equal(cfg.dir, c.dir);
  assert.equal(cfg.configPath, join(c.dir, 'config.lua'));
  assert.deepEqual(cfg.warnings, ['config.lua: unknown key custom (ignored)']);
});

test('secrets.lua is evaluated first and visible as clm.secrets; values kept for redaction', async (t) => {
  const c = tempFor(t, {
    'secrets.lua': 'return { groq = "gsk-123", nested = { tavily = "tvly-9" } }',
    'config.lua': `return {
      providers = { groq = { url = "https://api.groq.com/openai/v1", api_key = clm.secrets.groq } },
      tools = { web_search = { api_key = clm.secrets.nested.tavily } },
      system_prompt = tostring(clm.secrets.missing),
    }`,
  });
  const cfg = await loadConfig({ dir: c.dir });
  assert.equal(cfg?.providers.groq.apiKey, 'gsk-123');
  assert.deepEqual(cfg?.tools.web_search, { api_key: 'tvly-9' });
  assert.equal(cfg?.systemPrompt, 'nil');
  assert.deepEqual(cfg?.secrets, { groq: 'gsk-123', nested: { tavily: 'tvly-9' } });
  assert.deepEqual(cfg?.warnings, []);
});

test('secrets.lua cannot break clm for config.lua by replacing the global', async (t) => {
  const c = tempFor(t, {
    'secrets.lua': 'clm = 5\nreturn { k = "v" }',
    'config.lua': 'return { model = clm.secrets.k }',
  });
  assert.equal((await loadConfig({ dir: c.dir }))?.model, 'v');
});

test('missing secrets.lua ⇒ clm.secrets = {} without warnings', async (t) => {
  const c = tempFor(t, { 'config.lua': 'return { model = type(clm.secrets) .. tostring(next(clm.secrets)) }' });
  const cfg = await loadConfig({ dir: c.dir });
  assert.equal(cfg?.model, 'tablenil');
  assert.deepEqual(cfg?.secrets, {});
  assert.deepEqual(cfg?.warnings, []);
});

test('broken secrets.lua ⇒ {} plus a warning (returned and logged); config.lua still loads', async (t) => {
  for (const [src, expect] of [
    ['return { a = ', /^secrets\.lua:1: unexpected symbol near <eof>; clm.secrets is empty$/],
    ['return "key"', /^secrets\.lua: must return a table \(it returned string\); clm.secrets is empty$/],
    ['local x = nil; return x.y', /^secrets\.lua:1: attempt to index a nil value/],
  ] as const) {
    const c = tempFor(t, { 'secrets.lua': src, 'config.lua': 'return { model = tostring(next(clm.secrets)) }' });
    const log: string[] = [];
    const cfg = await loadConfig({ dir: c.dir, log: (l) => log.push(l) });
    assert.equal(cfg?.model, 'nil', src);
    assert.deepEqual(cfg?.secrets, {});
    assert.equal(cfg?.warnings.length, 1, src);
    assert.match(cfg!.warnings[0], expect);
    assert.ok(log.includes(cfg!.warnings[0]));
  }
});

test('secrets.lua readable by group/other ⇒ debug-log warning; 0600 ⇒ none', async (t) => {
  const c = tempFor(t, { 'config.lua': 'return {}' });
  const p = c.write('secrets.lua', 'return {}', 0o640);
  const log: string[] = [];
  await loadConfig({ dir: c.dir, log: (l) => log.push(l) });
  assert.deepEqual(withoutMoves(log), [`secrets: ${p} is readable by group/other; consider chmod 600`]);
  c.write('secrets.lua', 'return {}', 0o604);
  log.length = 0;
  await loadConfig({ dir: c.dir, log: (l) => log.push(l) });
  assert.equal(withoutMoves(log).length, 1);
  c.write('secrets.lua', 'return {}', 0o600);
  log.length = 0;
  await loadConfig({ dir: c.dir, log: (l) => log.push(l) });
  assert.deepEqual(withoutMoves(log), []);
});

test('syntax error ⇒ ConfigError with file and line', async (t) => {
  const c = tempFor(t, { 'config.lua': 'return {\n  model = "x",\n  y = = 1,\n}' });
  const e = await loadError(c.dir);
  assert.equal(e.message, "config.lua:3: unexpected symbol near '='");
  assert.equal(e.line, 3);
  assert.equal(e.file, join(c.dir, 'config.lua'));
});

test('runtime error ⇒ ConfigError with file and line; error(msg, 0) still names the file', async (t) => {
  const c = tempFor(t, { 'config.lua': 'local p = {}\nreturn { model = p.x.y }' });
  const e = await loadError(c.dir);
  assert.match(e.message, /^config\.lua:2: attempt to index a nil value \(field 'x'\)$/);
  assert.equal(e.line, 2);
  c.write('config.lua', 'error("no thanks", 0)');
  assert.equal((await loadError(c.dir)).message, 'config.lua: no thanks');
  c.write('config.lua', 'error({})');
  assert.equal((await loadError(c.dir)).message, 'config.lua: (error object is a table value)');
});

test('config.lua not returning a table ⇒ ConfigError', async (t) => {
  const c = tempFor(t, { 'config.lua': 'local t = { model = "x" }' });
  assert.equal((await loadError(c.dir)).message, 'config.lua: must return a table (it returned nil)');
  c.write('config.lua', 'return "model"');
  assert.equal((await loadError(c.dir)).message, 'config.lua: must return a table (it returned string)');
  c.write('config.lua', 'return { "a", "b" }');
  assert.equal((await loadError(c.dir)).message, 'config.lua: must return a table of settings, not a list');
});

test('functions cannot be config values: error names the key path', async (t) => {
  const c = tempFor(t, { 'config.lua': 'return { tools = { x = { cb = function() end } } }' });
  const e = await loadError(c.dir);
  assert.equal(e.message, 'config.lua: tools.x.cb: a function cannot be a config value');
  assert.equal(e.keyPath, 'tools.x.cb');
  c.write('config.lua', 'local t = {}; t.self = t; return { tools = { loop = t } }');
  assert.match((await loadError(c.dir)).message, /^config\.lua: tools\.loop(\.self)+: tables nested deeper than 64 levels/);
});

test('an endless loop is stopped with a clear error, even one hiding behind pcall', async (t) => {
  const c = tempFor(t, { 'config.lua': 'local n = 0\nwhile true do n = n + 1 end' });
  let e = await loadError(c.dir, { budgetMs: 150 });
  assert.equal(e.message, 'config.lua:2: evaluation took longer than 150 ms (endless loop?)');
  assert.equal(e.line, 2);
  c.write('config.lua', 'local function spin() while true do end end\nwhile true do pcall(spin) end');
  e = await loadError(c.dir, { budgetMs: 150 });
  assert.match(e.message, /^config\.lua:1: evaluation took longer than 150 ms/);
});

test('a loop that pcall catches inside a sort comparator (cannot yield) is stopped by force', async (t) => {
  const c = tempFor(t, {
    'config.lua':
      'local function spin() while true do end end\nlocal t = { 3, 1, 2 }\ntable.sort(t, function() while true do pcall(spin) end end)',
  });
  const e = await loadError(c.dir, { budgetMs: 100 });
  assert.match(e.message, /^config\.lua:1: evaluation took longer than 100 ms \(endless loop\?\)$/);
});

test('the config state has no os, io, debug, package, require, load, dofile, loadfile', async (t) => {
  const c = tempFor(t, {
    'config.lua': `return { model = table.concat({ type(os), type(io), type(debug), type(package), type(require),
      type(load), type(dofile), type(loadfile), type(print), type(string.format), type(utf8.char), type(math.floor) }, ",") }`,
  });
  const cfg = await loadConfig({ dir: c.dir });
  assert.equal(cfg?.model, 'nil,nil,nil,nil,nil,nil,nil,nil,nil,function,function,function');
});

test('memory is capped: a huge string is an error, not an exhausted process', async (t) => {
  const c = tempFor(t, { 'config.lua': 'return { model = string.rep("x", 1 << 30) }' });
  assert.equal((await loadError(c.dir)).message, 'config.lua: not enough memory');
});

test('a UTF-8 BOM and a #! first line are skipped; line numbers hold', async (t) => {
  const c = tempFor(t);
  c.write('config.lua', '\ufeff#!/usr/bin/env lua\nreturn { model = "ü" }');
  assert.equal((await loadConfig({ dir: c.dir }))?.model, 'ü');
  c.write('config.lua', '#!/usr/bin/env lua\nreturn {\n  x = = 2 }');
  assert.equal((await loadError(c.dir)).line, 3);
});

test('importing src/config does not load the Lua runtime (no wasm without a config.lua)', () => {
  // Walk the static (non-type) import graph from index.ts.
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../src/config');
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+'([^']+)'/gm)) {
      const spec = m[1];
      assert.ok(
        !spec.includes('wasmoon') && !spec.includes('/lua/') && !spec.includes('lua-state') && !spec.includes('lua-value'),
        `${file} statically imports ${spec}`,
      );
      if (spec.startsWith('.') && file.startsWith(root)) visit(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
    }
  };
  visit(join(root, 'index.ts'));
  assert.ok(seen.size > 5);
});

test('a __gc finalizer (it would run with the deadline off) is refused', async (t) => {
  const c = tempFor(t, { 'config.lua': 'setmetatable({}, { __gc = function() while true do end end })\nreturn {}' });
  const e = await loadError(c.dir);
  assert.match(e.message, /^config\.lua:1: setmetatable: __gc metamethods are not allowed in config files/);
});

test('a run-time error in secrets.lua that quotes one of its strings does not show it', async (t) => {
  for (const src of [
    'local k = "sk-live-abcdef123456"\nerror("bad key " .. k)',
    'local k = [[sk-live-abcdef123456]]\nreturn { k = k + 1 }\n',
    'local k = "sk-live-abcdef123456"\nassert(false, k)',
  ]) {
    const c = tempFor(t, { 'secrets.lua': src, 'config.lua': 'return {}' });
    const log: string[] = [];
    const cfg = await loadConfig({ dir: c.dir, log: (l) => log.push(l) });
    assert.equal(cfg?.warnings.length, 1, src);
    assert.doesNotMatch(cfg!.warnings[0]!, /abcdef/, src);
    assert.match(cfg!.warnings[0]!, /^secrets\.lua:2: .*; clm\.secrets is empty$/);
    assert.ok(!log.some((l) => l.includes('abcdef')), src);
  }
});
