// json.encode / json.decode / json.null edge cases, as plugins see them.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadPlugins, type PluginHost } from '../../src/lua/index.js';
import { fixtures, ok } from './helpers.js';

let host: PluginHost;
before(async () => {
  host = await loadPlugins({ dirs: [join(fixtures, 'lua-json')] });
  assert.deepEqual(host.errors, []);
});
after(() => host.close());

test('json.encode: scalars, strings, empty table, arrays, sorted objects, nesting, nulls', async () => {
  const lines = (await ok(host, 'encode_cases')).split('\n');
  assert.deepEqual(lines, [
    'nil: null',
    'null: null',
    'true: true',
    'int: 42',
    'neg: -7',
    'float: 1.5',
    'whole float: 2',
    'maxint: 9223372036854775807',
    'nan: null',
    'inf: null',
    'string: "a\\"b\\\\c\\n\\u0000é"',
    'empty: {}',
    'array: [1,"two",false]',
    'object: {"a":2,"b":1,"c":{"y":[1,{"d":null}],"z":1}}',
    'sparse: {"1":"a","3":"c"}',
    'mixed: {"1":1,"2":2,"x":"y"}',
    'zero key: {"0":"z"}',
    'float key: {"1.5":"f"}',
    'bool key: {"k":2}',
    'null in array: [1,null,3]',
    'nested empty: {"a":{},"b":[{}]}',
    'function: false json.encode: cannot encode a function value',
    'cycle: false json.encode: tables nested deeper than 64 levels (a cycle?)',
    'ctx: false json.encode: cannot encode a userdata value',
  ]);
});

test('json.decode: null is json.null, integers vs floats, empty containers, nesting', async () => {
  assert.equal(
    await ok(host, 'decode', { text: '{"a":null,"b":[1,2.5,"x",true],"c":{},"d":[]}' }),
    '{a=null,b={1=integer:1,2=float:2.5,3="x",4=boolean:true},c={},d={}}',
  );
  assert.equal(
    await ok(host, 'decode', { text: '[1e400, 12345678901234567890, -3]' }),
    '{1=float:inf,2=float:1.2345678901235e+19,3=integer:-3}',
  );
  assert.equal(await ok(host, 'decode', { text: '"\\u0000\\u00e9"' }), '"\\0é"');
  assert.equal(await ok(host, 'decode', { text: '{"deep":{"er":{"est":[[[]]]}}}' }), '{deep={er={est={1={1={}}}}}}');
});

test('json.decode: invalid input returns nil, err (it does not raise)', async () => {
  assert.equal(await ok(host, 'decode', { text: '{"a":' }), 'nil, json.decode: invalid JSON: Unexpected end of JSON input');
  assert.equal(await ok(host, 'decode', { text: '' }), 'nil, json.decode: invalid JSON: Unexpected end of JSON input');
  assert.equal(await ok(host, 'decode_nonstring'), 'nil, json.decode: expected a string');
  assert.equal(await ok(host, 'decode', { text: '['.repeat(300) + ']'.repeat(300) }), 'nil, json.decode: nesting deeper than 200 levels');
});

test('json.decode: 2 MiB is accepted, one byte more is rejected', async () => {
  assert.equal(await ok(host, 'decode_big'), '2097150 | nil, json.decode: input too large (2097153 > 2097152 bytes)');
});

test('round trip keeps data and gives a stable key order', async () => {
  assert.equal(
    await ok(host, 'roundtrip', { text: '{"z":[1,{"y":null}],"a":"é","m":{"b":true,"a":false}}' }),
    '{"a":"é","m":{"a":false,"b":true},"z":[1,{"y":null}]}',
  );
});

test('json.null is a light userdata distinct from nil, and truthy', async () => {
  assert.equal(await ok(host, 'null_sentinel', '{"x":null}'), 'userdata true true true');
});

test('json.encode stops at the plugin memory cap instead of building a huge text outside it', async () => {
  const rss0 = process.memoryUsage().rss;
  assert.equal(await ok(host, 'encode_amplified', {}), 'false not enough memory');
  assert.ok(process.memoryUsage().rss - rss0 < 100 * 1024 * 1024);
});

test('tool arguments that are not a JSON object are refused with a clear message', async () => {
  const echo = host.tools.find((t) => t.name === 'echo_args_type')!;
  for (const raw of ['null', '5', '"s"', '[1,2]']) {
    const r = await new Promise<string>((res) =>
      echo.invoke({
        name: 'echo_args_type',
        args: raw,
        outputCap: 65536,
        timeoutMs: 0,
        signal: new AbortController().signal,
        done: false,
        complete: (o) => res(`ok ${String(o)}`),
        fail: (m) => res(`fail ${m}`),
        notify() {},
      }),
    );
    assert.equal(r, 'fail invalid tool arguments (expected a JSON object)', raw);
  }
  assert.equal(await ok(host, 'echo_args_type', {}), 'table');
});
