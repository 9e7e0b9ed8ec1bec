// The evaluation cache and what looks into a secret: a library call given one, a comparison with
// a constant the source mentions, secrets.lua that is code, a key written into config.lua itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_CACHE_FILE } from '../../src/config/config-cache.js';

import { setup } from './cache-setup.js';

test("a configuration that looks into a secret's value is not cached, and stays right", async (t) => {
  for (const [name, config, reason] of [
    ['a method call', 'return { model = "m/" .. clm.secrets.k:sub(1, 3) }', /looks into a secret's value/],
    [
      'a library call behind pcall',
      'local ok = pcall(string.find, clm.secrets.k, "^sp")\nreturn { model = ok and "m/a" or "m/b" }',
      /looks into a secret's value/,
    ],
    ['a pattern on it', 'return { model = clm.secrets.k:match("^sp") and "m/sp" or "m/no" }', /looks into a secret's value/],
    ['its length', 'return { max_iterations = #clm.secrets.k }', /depends on more than where the secrets go/],
    ['a padded format', 'return { system_prompt = string.format("%20s", clm.secrets.k) }', /looks into a secret's value/],
    ['tonumber', 'return { max_iterations = tonumber(clm.secrets.k, 36) or 0 }', /looks into a secret's value/],
    ['rawlen', 'return { max_iterations = rawlen(clm.secrets.k) }', /looks into a secret's value/],
    ['string.rep by method syntax', 'return { system_prompt = clm.secrets.k:rep(2) }', /looks into a secret's value/],
    [
      'a comparison of two secrets',
      'return { model = clm.secrets.k == clm.secrets.n and "m/same" or "m/different" }',
      /depends on more than where the secrets go/,
    ],
  ] as const) {
    const s = setup(t, { 'secrets.lua': 'return {}', 'config.lua': config });
    for (const value of ['special', 'spare', 'other-value']) {
      s.c.write('secrets.lua', `return { k = "${value}", n = "${name.startsWith('a comparison') ? value : `n-${value}`}" }`);
      for (let i = 0; i < 2; i++) {
        const cfg = await s.load();
        assert.ok(!s.hit(), `${name}: ${s.log.join('\n')}`);
        assert.ok(
          s.log.some((l) => /^config: not cached: /.test(l) && reason.test(l)),
          `${name}: ${s.log.join('\n')}`,
        );
        assert.ok(!s.log.some((l) => l.includes(value)), `${name}: a log line quotes the secret`);
        assert.deepStrictEqual(cfg, await s.plain(), name);
      }
    }
    assert.ok(!existsSync(join(s.cacheDir, CONFIG_CACHE_FILE)), name);
  }
});

test('a comparison with a constant: cached while the value does not match it, evaluated when a value the source mentions comes', async (t) => {
  const s = setup(t, {
    'secrets.lua': 'return { k = "spare-000000" }',
    'config.lua':
      'local known = { dev = "m/dev-model" }\nreturn { model = known[clm.secrets.k] or (clm.secrets.k == "special" and "m/special" or "m/other"), providers = { m = { api_key = clm.secrets.k } } }',
  });
  const expect = async (value: string, model: string, hit: boolean) => {
    s.c.write('secrets.lua', `return { k = "${value}" }`);
    const cfg = await s.load();
    assert.equal(cfg?.model, model, value);
    assert.equal(cfg?.providers.m.apiKey, value);
    assert.equal(s.hit(), hit, `${value}: ${s.log.join('\n')}`);
    assert.deepStrictEqual(cfg, await s.plain(), value);
  };
  await expect('special', 'm/special', false); // real and sentinel differ: not cached
  assert.ok(
    s.log.some((l) => /^config: not cached: config\.lua's result depends on more than where the secrets go/.test(l)),
    s.log.join('\n'),
  );
  await expect('spare-000000', 'm/other', false); // the value makes no difference: cached
  assert.ok(s.cached());
  await expect('spare-111111', 'm/other', true);
  await expect('special', 'm/special', false); // the source mentions "special": the entry is not trusted
  await expect('dev', 'm/dev-model', false); // nor a name it mentions
  await expect('spare-222222', 'm/other', true);
});

test('secrets.lua that is code (globals config.lua may read) is evaluated every time and never cached', async (t) => {
  const s = setup(t, {
    'secrets.lua': 'KEY = "k-from-a-global-123"\nreturn { k = KEY }',
    'config.lua': 'return { model = "m/" .. KEY, providers = { m = { api_key = clm.secrets.k } } }',
  });
  for (let i = 0; i < 2; i++) {
    const cfg = await s.load();
    assert.equal(cfg?.model, 'm/k-from-a-global-123');
    assert.ok(s.log.includes('config: secrets.lua is not a plain literal table; the evaluation cache is not used'), s.log.join('\n'));
  }
  assert.ok(!existsSync(join(s.cacheDir, CONFIG_CACHE_FILE)));
  // A broken secrets.lua: Lua's warning as before, and no cache.
  s.c.write('secrets.lua', 'return { k = "unfinished }');
  s.c.write('config.lua', 'return {}');
  const cfg = await s.load();
  assert.match(cfg!.warnings[0]!, /^secrets\.lua:1: unfinished string .*; clm\.secrets is empty$/);
});

test('a key written into config.lua itself, or a secret used as a table key, is never copied into the cache', async (t) => {
  const s = setup(t, {
    'secrets.lua': 'return { k = "sk-from-secrets-0000" }',
    'config.lua': 'return { providers = { p = { api_key = "sk-literal-in-config-123" } } }',
  });
  await s.load();
  assert.ok(
    s.log.some((l) => /^config: not cached: the result would hold a secret value/.test(l)),
    s.log.join('\n'),
  );
  assert.ok(!existsSync(join(s.cacheDir, CONFIG_CACHE_FILE)));
  s.c.write('config.lua', 'return { tools = { [clm.secrets.k] = {} } }');
  const cfg = await s.load();
  assert.deepStrictEqual(cfg?.tools, { 'sk-from-secrets-0000': {} });
  // Substitution also reaches keys: the entry holds the sentinel there, the hit the value.
  const again = await s.load();
  assert.ok(s.hit(), s.log.join('\n'));
  assert.deepStrictEqual(again, await s.plain());
  assert.ok(!s.cacheText().includes('sk-from-secrets'));
});
