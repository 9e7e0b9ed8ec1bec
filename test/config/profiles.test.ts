// Agent profiles: inline agents[name] or agents/<name>.lua, merged over every top-level key but `agent`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ConfigError, listAgents, loadConfig, mergeProfile, selectAgent } from '../../src/config/index.js';
import { tempFor } from './helpers.js';

const TOP = `return {
  agent = "coder",
  model = "a/top-model",
  system_prompt = "top prompt",
  volatile_tools = { "top_*" },
  show_thinking = false,
  providers = {
    a = { url = "https://a.example/v1", api_key = clm.secrets.a, models = { ["top-model"] = { context_size = 1000 } } },
    b = { kind = "anthropic", url = "https://b.example/v1" },
  },
  tools = { weather = { units = "metric", city = "Oslo" } },
  mcp_servers = { { name = "one", command = { "one" } }, { name = "two", command = { "two" } } },
  agents = {
    coder = { model = "b/claude", system_prompt = "code only" },
    quiet = { volatile_tools = {}, mcp_servers = {} },
  },
}`;

test('inline profile from the config `agent` key, and -a overriding it', async (t) => {
  const c = tempFor(t, { 'config.lua': TOP, 'secrets.lua': 'return { a = "sk-a" }' });
  const cfg = await loadConfig({ dir: c.dir });
  assert.equal(cfg?.agent, 'coder');
  assert.equal(cfg?.profilePath, join(c.dir, 'config.lua'));
  assert.equal(cfg?.model, 'b/claude');
  assert.equal(cfg?.systemPrompt, 'code only');
  assert.deepEqual(cfg?.volatileTools, ['top_*']); // not set by the profile ⇒ top level

  const quiet = await loadConfig({ dir: c.dir, agent: 'quiet' });
  assert.equal(quiet?.agent, 'quiet');
  assert.equal(quiet?.model, 'a/top-model');
  assert.deepEqual(quiet?.volatileTools, []); // {} clears a list
  assert.deepEqual(quiet?.mcpServers, []);
});

test('file profile agents/<name>.lua runs in the same state and sees clm.secrets', async (t) => {
  const c = tempFor(t, {
    'config.lua': TOP,
    'secrets.lua': 'return { a = "sk-a", research = "sk-research" }',
    'agents/research.lua': 'return { model = "a/deep", providers = { a = { api_key = clm.secrets.research } } }',
  });
  const cfg = await loadConfig({ dir: c.dir, agent: 'research' });
  assert.equal(cfg?.profilePath, join(c.dir, 'agents', 'research.lua'));
  assert.equal(cfg?.model, 'a/deep');
  assert.equal(cfg?.providers.a.apiKey, 'sk-research');
  assert.equal(cfg?.providers.a.url, 'https://a.example/v1'); // deep merge keeps the rest
  assert.deepEqual(cfg?.providers.a.models, { 'top-model': { contextSize: 1000 } });
  assert.deepEqual(Object.keys(cfg!.providers).sort(), ['a', 'b']);
});

test('an inline profile wins over a file of the same name', async (t) => {
  const c = tempFor(t, { 'config.lua': TOP, 'agents/coder.lua': 'return { model = "from/file" }' });
  assert.equal((await loadConfig({ dir: c.dir }))?.model, 'b/claude');
});

test('a profile merges over every key except agent: tables deep, lists replaced', async (t) => {
  const c = tempFor(t, {
    'config.lua': TOP,
    'agents/all.lua': `return {
      agent = "other",                         -- ignored
      model = "b/m2",
      system_prompt = "p2",
      volatile_tools = { "x_*" },
      show_thinking = "true",
      expand_output = true,
      mcp_ready_timeout_ms = 2500,
      providers = { b = { rate_burst = 10, models = { m2 = { autocompact_pct = 50 } } }, c = { url = "http://c.local/v1" } },
      tools = { weather = { units = "imperial" }, web_search = { depth = 2 } },
      mcp_servers = { { name = "three", transport = "http", url = "http://x/mcp" } },
    }`,
  });
  const cfg = await loadConfig({ dir: c.dir, agent: 'all' });
  assert.ok(cfg);
  assert.equal(cfg.agent, 'all');
  assert.equal(cfg.model, 'b/m2');
  assert.equal(cfg.systemPrompt, 'p2');
  assert.deepEqual(cfg.volatileTools, ['x_*']);
  assert.equal(cfg.showThinking, true);
  assert.equal(cfg.expandOutput, true);
  assert.equal(cfg.mcpReadyTimeoutMs, 2500);
  assert.deepEqual(cfg.providers.b, {
    name: 'b',
    kind: 'anthropic',
    url: 'https://b.example/v1',
    rateBurst: 10,
    models: { m2: { autocompactPct: 50 } },
  });
  assert.equal(cfg.providers.c.url, 'http://c.local/v1');
  assert.equal(cfg.providers.a.url, 'https://a.example/v1');
  assert.deepEqual(cfg.tools, { weather: { city: 'Oslo', units: 'imperial' }, web_search: { depth: 2 } });
  assert.deepEqual(cfg.mcpServers, [{ name: 'three', transport: 'http', url: 'http://x/mcp' }]);
  assert.equal(cfg.raw.agent, 'coder'); // the profile's own `agent` key never applies
});

test('unknown agent ⇒ ConfigError, whether named by -a or by the config `agent` key', async (t) => {
  const c = tempFor(t, { 'config.lua': 'return { agent = "ghost" }' });
  const expected = `agent 'ghost' not found (looked for agents.ghost in config.lua and ${join(c.dir, 'agents', 'ghost.lua')})`;
  await assert.rejects(loadConfig({ dir: c.dir }), (e: unknown) => e instanceof ConfigError && e.message === expected);
  c.write('config.lua', 'return {}');
  await assert.rejects(loadConfig({ dir: c.dir, agent: 'ghost' }), (e: unknown) => e instanceof ConfigError && e.message === expected);
  // names cannot reach outside agents/
  c.write('evil.lua', 'return { model = "evil" }');
  await assert.rejects(loadConfig({ dir: c.dir, agent: '../evil' }), /agent '..\/evil' not found/);
});

test('a broken or non-table profile file ⇒ ConfigError naming agents/<name>.lua and the line', async (t) => {
  const c = tempFor(t, { 'config.lua': 'return {}', 'agents/bad.lua': 'return {\n  model = ,\n}' });
  await assert.rejects(
    loadConfig({ dir: c.dir, agent: 'bad' }),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message === "agents/bad.lua:2: unexpected symbol near ','" &&
      e.line === 2 &&
      e.file === join(c.dir, 'agents', 'bad.lua'),
  );
  c.write('agents/bad.lua', 'return 42');
  await assert.rejects(loadConfig({ dir: c.dir, agent: 'bad' }), { message: 'agents/bad.lua: must return a table (it returned number)' });
  c.write('agents/bad.lua', 'return { model = 42 }');
  await assert.rejects(loadConfig({ dir: c.dir, agent: 'bad' }), { message: 'agents/bad.lua:1: model must be a string (got 42)' });
  c.write('config.lua', 'return { agents = { bad = { volatile_tools = "x" } } }');
  await assert.rejects(loadConfig({ dir: c.dir, agent: 'bad' }), {
    message: 'config.lua:1: agents.bad.volatile_tools must be a list of strings (got "x")',
  });
});

test('selectAgent switches profiles on the loaded config (re-reading the file); listAgents', async (t) => {
  const c = tempFor(t, { 'config.lua': TOP, 'agents/research.lua': 'return { model = "a/r1" }' });
  const cfg = (await loadConfig({ dir: c.dir }))!;
  assert.equal(cfg.model, 'b/claude');
  assert.equal((await selectAgent(cfg, 'research')).model, 'a/r1');
  c.write('agents/research.lua', 'return { model = "a/r2" }');
  const r2 = await selectAgent(cfg, 'research');
  assert.equal(r2.model, 'a/r2');
  const none = await selectAgent(r2, undefined);
  assert.equal(none.model, 'a/top-model');
  assert.equal(none.agent, undefined);
  await assert.rejects(selectAgent(cfg, 'ghost'), ConfigError);
  assert.deepEqual(listAgents(cfg), ['coder', 'quiet', 'research']);
});

test('mergeProfile on plain tables', () => {
  const top = { agent: 'a', x: { y: 1, z: [1, 2] }, l: [1], s: 's' };
  assert.deepEqual(mergeProfile(top, { agent: 'b', x: { z: [3], w: 2 }, l: {}, s: 't' }), {
    agent: 'a',
    x: { y: 1, z: [3], w: 2 },
    l: {},
    s: 't',
  });
  assert.deepEqual(top, { agent: 'a', x: { y: 1, z: [1, 2] }, l: [1], s: 's' }); // inputs untouched
});
