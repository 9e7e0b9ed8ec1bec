// Type checks of every clm-config(5) key: a wrong type names the file and the key path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, validateValues } from '../../src/config/index.js';
import { tempFor } from './helpers.js';

const ctx = { label: 'config.lua', prefix: '' };
const bad = (raw: Record<string, unknown>, message: string, keyPath?: string) =>
  assert.throws(
    () => validateValues(raw, ctx),
    (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.equal(e.message, message);
      if (keyPath) assert.equal(e.keyPath, keyPath);
      return true;
    },
  );

test('wrong types name the key path', () => {
  bad({ model: 1 }, 'config.lua: model must be a string (got 1)', 'model');
  bad({ agent: true }, 'config.lua: agent must be a string (got true)');
  bad({ model: 'groq/' }, "config.lua: model 'groq/' has no model id after '/'");
  bad({ model: '/x' }, "config.lua: model '/x' has an empty provider name before '/'");
  bad({ providers: 'groq' }, 'config.lua: providers must be a table of name = { ... } (got "groq")');
  bad({ providers: { groq: 'x' } }, 'config.lua: providers.groq must be a table (got "x")');
  bad({ providers: { groq: { url: 5 } } }, 'config.lua: providers.groq.url must be a string (got 5)', 'providers.groq.url');
  bad(
    { providers: { groq: { url: 'api.groq.com' } } },
    'config.lua: providers.groq.url must be an http:// or https:// URL (got "api.groq.com")',
  );
  bad(
    { providers: { g: { kind: 'gemini' } } },
    'config.lua: providers.g.kind must be one of "openai", "anthropic", "ollama", "openai-responses" (got "gemini")',
  );
  bad({ providers: { g: { api_key: {} } } }, 'config.lua: providers.g.api_key must be a string (got a table)');
  bad({ providers: { g: { rate_tokens_per_sec: '5' } } }, 'config.lua: providers.g.rate_tokens_per_sec must be a number (got "5")');
  bad({ providers: { g: { rate_burst: -1 } } }, 'config.lua: providers.g.rate_burst must be at least 0 (got -1)');
  bad(
    { providers: { g: { disable_parallel_tool_calls: 'yes' } } },
    'config.lua: providers.g.disable_parallel_tool_calls must be true, false or a number (got "yes")',
  );
  bad({ providers: { g: { max_tokens: 1.5 } } }, 'config.lua: providers.g.max_tokens must be a whole number (got 1.5)');
  bad(
    { providers: { g: { models: { m: { context_size: 'big' } } } } },
    'config.lua: providers.g.models.m.context_size must be a number (got "big")',
  );
  bad(
    { providers: { g: { models: { 'qwen3-32b': { autocompact_pct: 150 } } } } },
    'config.lua: providers.g.models["qwen3-32b"].autocompact_pct must be at most 99 (got 150)',
    'providers.g.models["qwen3-32b"].autocompact_pct',
  );
  bad(
    { providers: { g: { models: { m: { system_prompt: false } } } } },
    'config.lua: providers.g.models.m.system_prompt must be a string (got false)',
  );
  bad({ system_prompt: ['a'] }, 'config.lua: system_prompt must be a string (got a list)');
  bad({ tools: { weather: 'metric' } }, 'config.lua: tools.weather must be a table (got "metric")');
  bad({ volatile_tools: 'x_*' }, 'config.lua: volatile_tools must be a list of strings (got "x_*")');
  bad({ volatile_tools: ['a', 2] }, 'config.lua: volatile_tools[2] must be a string (got 2)');
  bad({ mcp_servers: { name: 'x' } }, 'config.lua: mcp_servers must be a list of server tables (got a table)');
  bad({ show_thinking: 'yes' }, 'config.lua: show_thinking must be true or false (got "yes")');
  bad({ expand_output: 1 }, 'config.lua: expand_output must be true or false (got 1)');
  bad({ mcp_ready_timeout_ms: 'soon' }, 'config.lua: mcp_ready_timeout_ms must be a number (got "soon")');
  bad({ agents: { a: 'b' } }, 'config.lua: agents.a must be a table (got "b")');
  bad({ ui: 'tmux' }, 'config.lua: ui must be one of "fullscreen", "inline" (got "tmux")', 'ui');
  bad({ ui: true }, 'config.lua: ui must be a string (got true)');
});

test('ui: "inline" or "fullscreen", absent by default; a profile sets it too, with file:line errors', async (t) => {
  assert.equal(validateValues({ ui: 'inline' }, ctx).ui, 'inline');
  assert.equal(validateValues({ ui: 'fullscreen' }, ctx).ui, 'fullscreen');
  assert.equal(validateValues({}, ctx).ui, undefined);
  const c = tempFor(t, {
    'config.lua': 'return {\n  ui = "inline",\n  agents = { full = { ui = "fullscreen" } },\n}\n',
    'agents/odd.lua': 'return {\n\n  ui = "split",\n}\n',
  });
  assert.equal((await loadConfig({ dir: c.dir }))!.ui, 'inline');
  assert.equal((await loadConfig({ dir: c.dir, agent: 'full' }))!.ui, 'fullscreen');
  await assert.rejects(loadConfig({ dir: c.dir, agent: 'odd' }), {
    message: 'agents/odd.lua:3: ui must be one of "fullscreen", "inline" (got "split")',
  });
  c.write('config.lua', 'return {\n  model = "a/b",\n  ui = 1,\n}\n');
  await assert.rejects(loadConfig({ dir: c.dir }), { message: 'config.lua:3: ui must be a string (got 1)' });
});

test('accepted forms: true or nonzero numbers, "true"/true, {} as an empty list, kind default openai', () => {
  const v = validateValues(
    {
      providers: {
        n1: { disable_parallel_tool_calls: 1 },
        n0: { disable_parallel_tool_calls: 0 },
        t: { disable_parallel_tool_calls: true },
        o: { url: 'http://127.0.0.1:8080/v1', max_tokens: 4096, models: { m: { context_size: 8192, autocompact_pct: 0 } } },
      },
      show_thinking: 'true',
      expand_output: true,
      volatile_tools: {},
      mcp_servers: {},
      tools: {},
    },
    ctx,
  );
  assert.equal(v.providers.n1.disableParallelToolCalls, true);
  assert.equal(v.providers.n0.disableParallelToolCalls, false);
  assert.equal(v.providers.t.disableParallelToolCalls, true);
  assert.equal(v.providers.o.kind, 'openai');
  assert.equal(v.providers.o.maxTokens, 4096);
  assert.deepEqual(v.providers.o.models, { m: { contextSize: 8192 } }); // autocompact_pct 0 = engine default
  assert.equal(v.showThinking, true);
  assert.equal(v.expandOutput, true);
  assert.deepEqual(v.volatileTools, []);
  assert.deepEqual(v.mcpServers, []);
  assert.deepEqual(validateValues({ show_thinking: 'false' }, ctx).showThinking, false);
});

test('unknown keys are warnings, not errors', () => {
  const warnings: string[] = [];
  validateValues({ modle: 'x', providers: { g: { 'api-key': 'k', models: { m: { ctx: 1 } } } } }, { ...ctx, warnings });
  assert.deepEqual(warnings, [
    'config.lua: unknown key modle (ignored)',
    'config.lua: unknown key providers.g["api-key"] (ignored)',
    'config.lua: unknown key providers.g.models.m.ctx (ignored)',
  ]);
});

test('type errors through loadConfig carry the file and the line of the key', async (t) => {
  const c = tempFor(t, { 'config.lua': 'return { providers = { groq = { url = 42 } } }' });
  await assert.rejects(
    loadConfig({ dir: c.dir }),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message === 'config.lua:1: providers.groq.url must be a string (got 42)' &&
      e.file === `${c.dir}/config.lua` &&
      e.line === 1,
  );
  c.write(
    'config.lua',
    'local url = "x"\nreturn {\n  model = "a/b",\n  providers = {\n    a = { kind = "openai" },\n    groq = {\n      url = 42,\n    },\n  },\n}\n',
  );
  await assert.rejects(loadConfig({ dir: c.dir }), { message: 'config.lua:7: providers.groq.url must be a string (got 42)' });
  // A key built by code has no place in the text: no line then.
  c.write('config.lua', 'local t = {}\nt["mo" .. "del"] = 5\nreturn t\n');
  await assert.rejects(loadConfig({ dir: c.dir }), { message: 'config.lua: model must be a string (got 5)' });
});

test('price: dollars per million tokens on a provider or a model; both input and output, none negative', () => {
  const v = validateValues(
    { providers: { g: { price: { input: 3, output: 15 }, models: { m: { price: { input: 1, output: 2, cached_input: 0.1 } } } } } },
    ctx,
  );
  assert.deepEqual(v.providers!.g!.price, { input: 3, output: 15 });
  assert.deepEqual(v.providers!.g!.models.m!.price, { input: 1, output: 2, cachedInput: 0.1 });
  bad(
    { providers: { g: { price: 3 } } },
    'config.lua: providers.g.price must be a table { input = N, output = N, cached_input = N } (dollars per million tokens) (got 3)',
  );
  bad(
    { providers: { g: { price: { input: 3 } } } },
    'config.lua: providers.g.price needs both input and output (dollars per million tokens)',
  );
  bad(
    { providers: { g: { models: { m: { price: { input: -1, output: 2 } } } } } },
    'config.lua: providers.g.models.m.price.input must be at least 0 (got -1)',
  );
});

test('the checkpoints table: its keys typed, sizes in MiB, unknown keys warned about', () => {
  const warnings: string[] = [];
  const v = validateValues(
    {
      checkpoints: {
        enabled: false,
        gitignore: 'true',
        max_file_mb: 0.5,
        max_files: 10,
        keep: 3,
        max_mb: 100,
        git_timeout_ms: 5000,
        colour: 1,
      },
    },
    { ...ctx, warnings },
  );
  assert.deepEqual(v.checkpoints, {
    enabled: false,
    gitignore: true,
    maxFileBytes: 524288,
    maxFiles: 10,
    keep: 3,
    maxBytes: 104857600,
    gitTimeoutMs: 5000,
  });
  assert.deepEqual(warnings, ['config.lua: unknown key checkpoints.colour (ignored)']);
  bad({ checkpoints: true }, 'config.lua: checkpoints must be a table (got true)');
  bad({ checkpoints: { keep: 0 } }, 'config.lua: checkpoints.keep must be at least 1 (got 0)');
  bad({ checkpoints: { max_file_mb: 'big' } }, 'config.lua: checkpoints.max_file_mb must be a number (got "big")');
});
