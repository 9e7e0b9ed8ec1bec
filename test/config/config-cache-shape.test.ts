// The evaluation cache and what Lua does to a secret without a library call: its length, an order,
// an equality, a numeral coercion, a result that varies from run to run, tables keyed by secrets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_CACHE_FILE } from '../../src/config/config-cache.js';
import { configCacheAnswers } from '../../src/config/load.js';

import { inTurn, sentinelBytes, setup } from './cache-setup.js';

test('a configuration whose result varies from run to run (math.random, collectgarbage, addresses) is never cached', async (t) => {
  // No os or io: environment variables, the time and files are out of config.lua's reach.
  const probe = setup(t, { 'config.lua': 'return { system_prompt = type(os) .. type(io) .. type(require) .. type(loadfile) }' });
  assert.equal((await probe.load())?.systemPrompt, 'nilnilnilnil');
  for (const [name, config] of [
    ['math.random, same result every time', 'local n = math.random(1)\nreturn { model = "m/" .. n }'],
    ['math.random as a method value', 'local r = math.random\nreturn { max_iterations = r(1, 1) }'],
    ['math.randomseed', 'math.randomseed(42)\nreturn { model = "m/x" }'],
    ['collectgarbage', 'local kb = collectgarbage("count")\nreturn { model = kb > 0 and "m/x" or "m/y" }'],
    ['a table address', 'local a = tostring({})\nreturn { model = a ~= "" and "m/x" or "m/y" }'],
    ['a function address in a format', 'local a = string.format("%p", print or type)\nreturn { model = a ~= "" and "m/x" or "m/y" }'],
  ] as const) {
    const s = setup(t, { 'secrets.lua': 'return { k = "k-0000000000" }', 'config.lua': config });
    for (let i = 0; i < 2; i++) {
      assert.deepStrictEqual(await s.load(), await s.plain(), name);
      assert.ok(!s.hit(), `${name}: ${s.log.join('\n')}`);
      assert.ok(
        s.log.some((l) => /^config: not cached: config\.lua's result may differ from run to run \(it calls [\w.]+\)$/.test(l)),
        `${name}: ${s.log.join('\n')}`,
      );
    }
    assert.ok(!existsSync(join(s.cacheDir, CONFIG_CACHE_FILE)), name);
  }
  // What that means: a key picked at random is picked again on every run.
  const s = setup(t, {
    'secrets.lua': 'return { a = "key-a-000000", b = "key-b-000000" }',
    'config.lua': 'return { providers = { m = { api_key = ({ clm.secrets.a, clm.secrets.b })[math.random(2)] } } }',
  });
  const seen = new Set<string>();
  for (let i = 0; i < 24 && seen.size < 2; i++) seen.add((await s.load())!.providers.m.apiKey!);
  assert.deepStrictEqual([...seen].sort(), ['key-a-000000', 'key-b-000000']);
});

test("a secret's length (in bytes) is part of the key: a value as long as a sentinel does not answer for other lengths", async (t) => {
  const n = await sentinelBytes(t);
  const config = 'return { max_iterations = #clm.secrets.k, model = #clm.secrets.k > 30 and "m/long" or "m/short" }';
  const hits = await inTurn(t, config, [
    { k: 'a'.repeat(n) }, // `#` agrees with the sentinel's
    { k: 'b'.repeat(7) },
    { k: 'c'.repeat(n + 1) },
    { k: `${'é'.repeat(5)}${'x'.repeat(n - 5)}` }, // n characters, n + 5 bytes
    { k: `${'é'.repeat(5)}${'x'.repeat(n - 10)}` }, // n bytes
    { k: 'd'.repeat(n) },
  ]);
  // The coincidence is cached (a value of that length gives the same), and answers only for it.
  assert.deepStrictEqual(hits, [false, false, false, false, true, true]);
});

test('an order between a secret and a constant, or between two secrets, is never cached', async (t) => {
  const turns = (k: string[], n: string[]) => k.map((v, i) => ({ k: v, n: n[i]! }));
  const cases: [string, Record<string, string>[]][] = [
    ['return { model = clm.secrets.k < "m" and "m/a" or "m/b" }', turns(['xyz-0000000', 'abc-0000000', 'xyz-1111111'], ['', '', ''])],
    ['return { model = "m" <= clm.secrets.k and "m/a" or "m/b" }', turns(['xyz-0000000', 'abc-0000000', 'xyz-1111111'], ['', '', ''])],
    [
      'return { model = clm.secrets.k < clm.secrets.n and "m/a" or "m/b" }',
      turns(['aaa-0000000', 'bbb-0000000', 'aaa-1111111'], ['bbb-0000000', 'aaa-0000000', 'bbb-1111111']),
    ],
    [
      'return { model = clm.secrets.k > clm.secrets.n and "m/a" or "m/b" }',
      turns(['aaa-0000000', 'bbb-0000000', 'aaa-1111111'], ['bbb-0000000', 'aaa-0000000', 'bbb-1111111']),
    ],
  ];
  for (const [config, secrets] of cases) {
    for (const s of secrets) if (s.n === '') delete s.n;
    assert.deepStrictEqual(await inTurn(t, config, secrets), [false, false, false], config);
  }
  // Eleven secrets (numbered in key order): the order of the 3rd and the 11th flips between the two sentinel runs too.
  const many = (a: string, b: string) => {
    const o: Record<string, string> = {};
    for (let i = 0; i < 11; i++) o[`s${String(i).padStart(2, '0')}`] = `filler-${i}-000`;
    o.s02 = a;
    o.s10 = b;
    return o;
  };
  const config = 'return { model = clm.secrets.s02 < clm.secrets.s10 and "m/a" or "m/b" }';
  assert.deepStrictEqual(await inTurn(t, config, [many('bbb-000', 'aaa-000'), many('aaa-000', 'bbb-000')]), [false, false]);
});

test('which secrets equal which is part of the key: values that become equal, or cease to be, are evaluated', async (t) => {
  const config =
    'return { model = clm.secrets.k == clm.secrets.n and "m/same" or "m/different", max_iterations = clm.secrets.k ~= clm.secrets.o and 1 or 2 }';
  const hits = await inTurn(t, config, [
    { k: 'key-aaaa', n: 'key-bbbb', o: 'key-cccc' },
    { k: 'key-aaaa', n: 'key-aaaa', o: 'key-cccc' }, // k == n now
    { k: 'key-dddd', n: 'key-eeee', o: 'key-ffff' }, // all different again: the first entry's shape
    { k: 'key-aaaa', n: 'key-bbbb', o: 'key-aaaa' }, // k == o
  ]);
  assert.deepStrictEqual(hits, [false, false, true, false]);
  // Equal values that are only passed along: cached, and the entry answers while they stay equal.
  const pass = 'return { providers = { a = { api_key = clm.secrets.k }, b = { api_key = clm.secrets.n } } }';
  assert.deepStrictEqual(
    await inTurn(t, pass, [
      { k: 'same-0000', n: 'same-0000' },
      { k: 'same-1111', n: 'same-1111' },
      { k: 'same-1111', n: 'diff-2222' },
      { k: 'same-3333', n: 'diff-4444' },
    ]),
    [false, true, false, true],
  );
});

test('a secret that reads as a number (arithmetic, a for loop, select coerce it), or is not valid UTF-8, is never cached', async (t) => {
  for (const config of [
    'local ok, v = pcall(function() return clm.secrets.k + 0 end)\nreturn { max_iterations = ok and v or 5 }',
    'local n = 1\npcall(function() for _ = 1, clm.secrets.k do n = n + 1 end end)\nreturn { max_iterations = n }',
    'local ok, v = pcall(select, clm.secrets.k, 10, 20, 30)\nreturn { max_iterations = ok and v or 5 }',
  ]) {
    const hits = await inTurn(t, config, [{ k: 'abc' }, { k: '002' }, { k: '0x3' }, { k: 'def' }]);
    assert.deepStrictEqual(hits, [false, false, false, true], config);
  }
  // The length of a value holding bytes that are not UTF-8 cannot be told from its decoded text.
  const n = await sentinelBytes(t);
  const s = setup(t, { 'secrets.lua': 'return {}', 'config.lua': 'return { max_iterations = #clm.secrets.k }' });
  for (const [secrets, bytes] of [
    [`return { k = "\\255${'x'.repeat(n - 1)}" }`, n],
    [`return { k = "\u{FFFD}${'x'.repeat(n - 1)}" }`, n + 2],
  ] as const) {
    s.c.write('secrets.lua', secrets);
    assert.equal((await s.load())?.maxIterations, bytes);
    assert.ok(!s.hit(), s.log.join('\n'));
    assert.ok(
      s.log.includes('config: clm.secrets.k holds U+FFFD (or bytes that are not UTF-8); the evaluation cache is not used'),
      s.log.join('\n'),
    );
  }
  s.c.write('secrets.lua', 'return { k = "0x1F" }');
  assert.equal((await s.load())?.maxIterations, 4);
  assert.ok(s.log.includes('config: clm.secrets.k reads as a number; the evaluation cache is not used'), s.log.join('\n'));
  assert.equal(configCacheAnswers({ dir: s.c.dir, cacheDir: s.cacheDir }), false);
});

test('a table keyed by secrets: built, looked up and counted through pairs, it is cached and right', async (t) => {
  // The order pairs visits string keys in is seeded per Lua state (it differs between runs
  // whatever the cache does), so only a result that does not depend on it is compared.
  const config = `local t = { [clm.secrets.a] = "x", [clm.secrets.b] = "y", plain = "z" }
local n, joined = 0, 0
for k, v in pairs(t) do n = n + 1; joined = joined + #v end
return { max_iterations = n * 10 + joined, system_prompt = t[clm.secrets.a] .. t[clm.secrets.b], tools = { [clm.secrets.a .. "-tool"] = { n = n } } }`;
  const hits = await inTurn(t, config, [
    { a: 'key-a-000000', b: 'key-b-000000' },
    { a: 'key-a-111111', b: 'key-b-111111' },
    { a: 'key-a-111111', b: 'key-a-111111' }, // equal: one key fewer
  ]);
  assert.deepStrictEqual(hits, [false, true, false]);
});
