// Startup resolution: model spec, --provider, -u, CLM_API_KEY, per-model settings, defaults.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, parseModelSpec, resolveConnection, type ClmConfig } from '../../src/config/index.js';
import { tempFor } from './helpers.js';

const CONFIG = `return {
  model = "groq/llama-3.3-70b",
  system_prompt = "top",
  volatile_tools = { "v_*" },
  providers = {
    groq = { url = "https://api.groq.com/openai/v1", api_key = clm.secrets.groq, rate_tokens_per_sec = 500, rate_burst = 6000,
             disable_parallel_tool_calls = 1, models = { ["llama-3.3-70b"] = { context_size = 131072, autocompact_pct = 60, system_prompt = "llama" } } },
    anthropic = { kind = "anthropic", url = "https://api.anthropic.com/v1", api_key = clm.secrets.anthropic, max_tokens = 8000 },
    openai = { kind = "openai-responses", url = "https://api.openai.com/v1/", api_key = "" },
    ollama = { kind = "ollama", url = "http://127.0.0.1:11434/v1" },
    openrouter = { url = "https://openrouter.ai/api/v1", models = { ["qwen/qwen3-32b"] = { context_size = 40960 } } },
    nourl = { kind = "openai" },
  },
}`;
const SECRETS = 'return { groq = "gsk-groq", anthropic = "sk-ant", tavily = "tvly-x" }';

async function config(t: { after(fn: () => void): void }): Promise<ClmConfig> {
  const c = tempFor(t, { 'config.lua': CONFIG, 'secrets.lua': SECRETS });
  return (await loadConfig({ dir: c.dir }))!;
}

const configError = (message: string) => (e: unknown) => e instanceof ConfigError && e.message === message;

test('parseModelSpec splits at the first /', () => {
  assert.deepEqual(parseModelSpec('groq/llama'), { provider: 'groq', model: 'llama' });
  assert.deepEqual(parseModelSpec('openrouter/qwen/qwen3-32b'), { provider: 'openrouter', model: 'qwen/qwen3-32b' });
  assert.deepEqual(parseModelSpec('gpt-oss-20b'), { model: 'gpt-oss-20b' });
  assert.throws(() => parseModelSpec('groq/'), configError("model 'groq/' has no model id after '/'"));
  assert.throws(() => parseModelSpec(''), ConfigError);
});

test('no config, no flags ⇒ the defaults', () => {
  assert.deepEqual(resolveConnection(null, {}, {}), {
    baseUrl: 'http://127.0.0.1:8081/v1/chat/completions',
    base: 'http://127.0.0.1:8081/v1',
    apiKey: '',
    provider: 'openai',
    model: 'local-model',
    secrets: [],
  });
  const r = resolveConnection(null, { model: 'qwen3', url: 'http://10.0.0.2:8080/v1/' }, { CLM_API_KEY: 'env-key' });
  assert.equal(r.baseUrl, 'http://10.0.0.2:8080/v1/chat/completions');
  assert.equal(r.model, 'qwen3');
  assert.equal(r.apiKey, 'env-key');
  assert.deepEqual(r.secrets, ['env-key']);
});

test('config model names the provider: url, key, kind, limits and per-model settings', async (t) => {
  const cfg = await config(t);
  const r = resolveConnection(cfg, {}, {});
  assert.equal(r.baseUrl, 'https://api.groq.com/openai/v1/chat/completions');
  assert.equal(r.base, 'https://api.groq.com/openai/v1');
  assert.equal(r.providerName, 'groq');
  assert.equal(r.provider, 'openai');
  assert.equal(r.model, 'llama-3.3-70b');
  assert.equal(r.apiKey, 'gsk-groq');
  assert.equal(r.rateTokensPerSec, 500);
  assert.equal(r.rateBurst, 6000);
  assert.equal(r.disableParallelToolCalls, true);
  assert.equal(r.contextSize, 131072);
  assert.equal(r.autocompactPct, 60);
  assert.equal(r.systemPrompt, 'llama'); // per-model over top level
  assert.deepEqual(r.volatileTools, ['v_*']);
  assert.deepEqual([...r.secrets].sort(), ['gsk-groq', 'sk-ant', 'tvly-x']);
});

test('-m overrides the config model; the model id keeps everything after the first /', async (t) => {
  const cfg = await config(t);
  const r = resolveConnection(cfg, { model: 'openrouter/qwen/qwen3-32b' }, {});
  assert.equal(r.providerName, 'openrouter');
  assert.equal(r.model, 'qwen/qwen3-32b');
  assert.equal(r.contextSize, 40960);
  assert.equal(r.systemPrompt, 'top');
  assert.equal(r.rateTokensPerSec, undefined);
});

test('a bare id is a literal model on the default connection', async (t) => {
  const cfg = await config(t);
  const r = resolveConnection(cfg, { model: 'llama-3.3-70b' }, {});
  assert.equal(r.providerName, undefined);
  assert.equal(r.baseUrl, 'http://127.0.0.1:8081/v1/chat/completions');
  assert.equal(r.model, 'llama-3.3-70b');
  assert.equal(r.contextSize, undefined);
  assert.equal(r.apiKey, '');
});

test('unknown provider in -m or --provider ⇒ ConfigError listing the configured ones', async (t) => {
  const cfg = await config(t);
  const names = 'anthropic, groq, nourl, ollama, openai, openrouter';
  assert.throws(
    () => resolveConnection(cfg, { model: 'Qwen/Qwen3-32B' }, {}),
    configError(`unknown provider 'Qwen' in model 'Qwen/Qwen3-32B' (configured: ${names})`),
  );
  assert.throws(
    () => resolveConnection(cfg, { provider: 'nope' }, {}),
    configError(`unknown provider 'nope' given to --provider (configured: ${names})`),
  );
  assert.throws(
    () => resolveConnection(null, { model: 'groq/x' }, {}),
    configError("unknown provider 'groq' in model 'groq/x' (configured: none)"),
  );
});

test('a provider without url needs -u', async (t) => {
  const cfg = await config(t);
  assert.throws(
    () => resolveConnection(cfg, { model: 'nourl/m' }, {}),
    configError("provider 'nourl' has no url (set providers.nourl.url in config.lua, or pass -u)"),
  );
  assert.equal(resolveConnection(cfg, { model: 'nourl/m', url: 'http://h/v1' }, {}).baseUrl, 'http://h/v1/chat/completions');
});

test('--provider overrides the connection and keeps the model id', async (t) => {
  const cfg = await config(t);
  const r = resolveConnection(cfg, { provider: 'anthropic' }, {});
  assert.equal(r.providerName, 'anthropic');
  assert.equal(r.provider, 'anthropic');
  assert.equal(r.baseUrl, 'https://api.anthropic.com/v1/messages');
  assert.equal(r.model, 'llama-3.3-70b');
  assert.equal(r.apiKey, 'sk-ant');
  assert.equal(r.maxTokens, 8000);
  assert.equal(r.contextSize, undefined); // anthropic has no models[llama-3.3-70b]
  const r2 = resolveConnection(cfg, { provider: 'groq', model: 'llama-3.3-70b' }, {});
  assert.equal(r2.contextSize, 131072); // the connection's models[id], also for a bare id
});

test('-u overrides the provider url; the dialect path follows the kind', async (t) => {
  const cfg = await config(t);
  const url = 'http://127.0.0.1:9999/v1';
  assert.equal(resolveConnection(cfg, { model: 'groq/x', url }, {}).baseUrl, `${url}/chat/completions`);
  assert.equal(resolveConnection(cfg, { model: 'anthropic/x', url }, {}).baseUrl, `${url}/messages`);
  assert.equal(resolveConnection(cfg, { model: 'openai/x', url }, {}).baseUrl, `${url}/responses`);
  assert.equal(resolveConnection(cfg, { model: 'ollama/x', url }, {}).baseUrl, `${url}/chat/completions`);
  // config urls too (a trailing slash is fine); the provider's key stays
  assert.equal(resolveConnection(cfg, { model: 'openai/gpt' }, {}).baseUrl, 'https://api.openai.com/v1/responses');
  assert.equal(resolveConnection(cfg, { model: 'groq/x', url }, {}).apiKey, 'gsk-groq');
  // a URL that already ends in the dialect path is not given it twice
  const full = resolveConnection(null, { url: 'http://127.0.0.1:1234/v1/chat/completions' }, {});
  assert.equal(full.baseUrl, 'http://127.0.0.1:1234/v1/chat/completions');
  assert.equal(full.base, 'http://127.0.0.1:1234/v1');
  // Without a scheme: http:// for this machine, the fix spelled out for any other host.
  assert.equal(resolveConnection(null, { url: 'localhost:8080' }, {}).baseUrl, 'http://localhost:8080/chat/completions');
  assert.equal(resolveConnection(null, { url: '127.0.0.1:8080/v1' }, {}).baseUrl, 'http://127.0.0.1:8080/v1/chat/completions');
  assert.equal(resolveConnection(null, { url: '[::1]:8080/v1' }, {}).baseUrl, 'http://[::1]:8080/v1/chat/completions');
  assert.throws(
    () => resolveConnection(null, { url: 'example.com:8080' }, {}),
    configError("-u: 'example.com:8080' has no scheme; use https://example.com:8080 (or http:// if the server has no TLS)"),
  );
  assert.throws(
    () => resolveConnection(null, { url: 'localhost.evil.com/v1' }, {}),
    configError("-u: 'localhost.evil.com/v1' has no scheme; use https://localhost.evil.com/v1 (or http:// if the server has no TLS)"),
  );
  assert.throws(() => resolveConnection(null, { url: 'ftp://h' }, {}), configError("-u: 'ftp://h' is not an http:// or https:// URL"));
});

test('CLM_API_KEY: set and non-empty wins over the config; set-but-empty and unset use the config key', async (t) => {
  const cfg = await config(t);
  assert.equal(resolveConnection(cfg, {}, { CLM_API_KEY: 'env-key' }).apiKey, 'env-key');
  assert.equal(resolveConnection(cfg, {}, { CLM_API_KEY: '' }).apiKey, 'gsk-groq');
  assert.equal(resolveConnection(cfg, {}, {}).apiKey, 'gsk-groq');
  assert.equal(resolveConnection(cfg, { model: 'ollama/m' }, {}).apiKey, ''); // provider without a key
  assert.equal(resolveConnection(cfg, { model: 'ollama/m' }, { CLM_API_KEY: 'env-key' }).apiKey, 'env-key');
  assert.ok(resolveConnection(cfg, {}, { CLM_API_KEY: 'env-key' }).secrets.includes('env-key'));
});

test('the profile supplies model and system_prompt', async (t) => {
  const c = tempFor(t, {
    'config.lua': CONFIG.replace(
      'return {',
      'return { agents = { fast = { model = "anthropic/haiku", system_prompt = "fast", volatile_tools = {} } },',
    ),
    'secrets.lua': SECRETS,
  });
  const cfg = (await loadConfig({ dir: c.dir, agent: 'fast' }))!;
  const r = resolveConnection(cfg, {}, {});
  assert.equal(r.providerName, 'anthropic');
  assert.equal(r.model, 'haiku');
  assert.equal(r.systemPrompt, 'fast');
  assert.deepEqual(r.volatileTools, []);
  assert.equal(resolveConnection(cfg, { model: 'groq/z' }, {}).model, 'z'); // -m over the profile
});
