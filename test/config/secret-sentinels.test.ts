// The sentinels and the shape of clm.secrets: how the sentinels sort (high, low, numbered in
// opposite orders), what the shape tells (lengths in bytes, which strings are equal) and does not
// (any value), and which strings Lua reads as numbers, checked against Lua's own tonumber.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigLua } from '../../src/config/lua-state.js';
import { makeSentinels, readsAsNumber, secretsShape, substitute, uncacheableSecret } from '../../src/config/secret-sentinels.js';
import { check, fc } from '../fixtures/fuzz.js';

const bytes = (s: string) => Buffer.from(s, 'utf8');

test('sentinels sort high or low, in opposite orders of their secrets, all of one length; substituting gives the values back', () => {
  for (const n of [1, 2, 10, 11, 101]) {
    const secrets = { list: Array.from({ length: n }, (_, i) => `value-${i}`), empty: '', num: 3 };
    const high = makeSentinels(secrets, '0123456789abcdef', 'high');
    const low = makeSentinels(secrets, 'fedcba9876543210', 'low');
    const sentinels = (s: typeof high) => (s.table as { list: string[] }).list;
    const all = [...sentinels(high), ...sentinels(low)];
    assert.equal(new Set(all.map((s) => bytes(s).length)).size, 1, `${n}: one length`);
    for (let i = 0; i + 1 < n; i++) {
      assert.ok(Buffer.compare(bytes(sentinels(high)[i]!), bytes(sentinels(high)[i + 1]!)) < 0, `${n}: high ${i}`);
      assert.ok(Buffer.compare(bytes(sentinels(low)[i]!), bytes(sentinels(low)[i + 1]!)) > 0, `${n}: low ${i}`);
    }
    for (const text of ['\x02', ' ', '!', '0', 'A', 'sk-live', '~~~~', '\x7f', 'é', '\u{E000}', '😀', '\u{10FFFE}x']) {
      assert.ok(
        sentinels(high).every((s) => Buffer.compare(bytes(s), bytes(text)) > 0),
        `high above ${JSON.stringify(text)}`,
      );
      assert.ok(
        sentinels(low).every((s) => Buffer.compare(bytes(s), bytes(text)) < 0),
        `low below ${JSON.stringify(text)}`,
      );
    }
    for (const s of [high, low]) {
      const values = s.paths.map((p) => String(p.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], secrets)));
      assert.deepStrictEqual(substitute(s.table, s.marker, values), secrets, `${n}`);
      assert.equal((s.table as { empty: string }).empty, '');
    }
  }
});

test("the shape: keys, empty strings, each other string's length in bytes and which are equal — no value", () => {
  const secrets = { a: 'sk-€uro', b: '', c: 'other', d: 'sk-€uro', list: ['other', 'x'], n: 7, t: true };
  assert.deepStrictEqual(secretsShape(secrets), [
    ['a', ['s', 9, 0]],
    ['b', ''],
    ['c', ['s', 5, 1]],
    ['d', ['s', 9, 0]],
    [
      'list',
      [
        ['s', 5, 1],
        ['s', 1, 2],
      ],
    ],
    ['n', 7],
    ['t', true],
  ]);
  const text = JSON.stringify(secretsShape(secrets));
  for (const v of ['sk-€uro', 'other', '"x"']) assert.ok(!text.includes(v), v);
  // Values of the same lengths and the same equalities: the same shape.
  assert.deepStrictEqual(
    secretsShape({ a: 'zz-€uro', b: '', c: 'thing', d: 'zz-€uro', list: ['thing', 'y'], n: 7, t: true }),
    secretsShape(secrets),
  );
  assert.notDeepStrictEqual(secretsShape({ ...secrets, d: 'sk-€urx' }), secretsShape(secrets), 'no longer equal');
  assert.notDeepStrictEqual(secretsShape({ ...secrets, c: 'othe€' }), secretsShape(secrets), 'as many characters, more bytes');
});

test('readsAsNumber agrees with Lua: tonumber, arithmetic and a for limit convert exactly those strings', async () => {
  const lua = await ConfigLua.create();
  const luaReads = (strings: string[]): boolean[] => {
    const lits = strings.map((s) => `"${[...bytes(s)].map((b) => `\\${b}`).join('')}"`);
    const r = lua.run(
      bytes(`local out = {} for i, s in ipairs({ ${lits.join(', ')} }) do
  local a, b = tonumber(s) ~= nil, pcall(function() return s + 0 end)
  local c = pcall(function() for _ = 1, s do break end end)
  assert(a == b and b == c, "tonumber, arithmetic and for disagree on " .. s)
  out[i] = a
end return out`),
      '=numbers',
    );
    assert.ok(r.ok, r.ok ? '' : r.message);
    return r.value as boolean[];
  };
  const known = [
    '0',
    '42',
    '-7',
    '+7',
    ' 12 ',
    '\t3\n',
    '0x1F',
    '0X1f',
    '-0x10',
    '1.5',
    '.5',
    '5.',
    '1e5',
    '1E-5',
    '1e',
    'e5',
    '0x',
    '0x1p4',
    '0x.8',
    '0x1.8p-1',
    'inf',
    'nan',
    '-inf',
    '1n',
    '0x1n',
    '1 2',
    '--1',
    '+-1',
    '1_000',
    '١٢',
    '12\0',
    '\v1\f',
    '99999999999999999999',
    'abc',
    '',
    ' ',
    '0b101',
    '1.2.3',
    '.',
    '-.',
    '0x-1',
  ];
  assert.deepStrictEqual(known.map(readsAsNumber), luaReads(known), known.join(' | '));
  const alphabet = fc.constantFrom(...' \t\n0123456789abcdefxXpPeEnN.+-\0i'.split(''));
  check(
    300,
    fc.array(
      fc.array(alphabet, { maxLength: 8 }).map((a) => a.join('')),
      { minLength: 1, maxLength: 40 },
    ),
    (strings) => {
      assert.deepStrictEqual(strings.map(readsAsNumber), luaReads(strings), JSON.stringify(strings));
      return true;
    },
  );
});

test('uncacheableSecret names the first secret that reads as a number or holds U+FFFD', () => {
  assert.equal(uncacheableSecret({ a: 'sk-1', b: '', n: 5 }), null);
  assert.equal(uncacheableSecret({ a: 'sk-1', pin: ' 1234 ' }), 'clm.secrets.pin reads as a number');
  assert.equal(uncacheableSecret({ list: ['x', '0x10'] }), 'clm.secrets.list[2] reads as a number');
  assert.equal(uncacheableSecret({ 'odd-key': 'bad \u{FFFD} byte' }), 'clm.secrets["odd-key"] holds U+FFFD (or bytes that are not UTF-8)');
});
