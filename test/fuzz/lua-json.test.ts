// Fuzzing JSON across the Lua boundary (json.encode/json.decode and tool arguments), through
// the real plugin runtime: any JSON value given as arguments comes back from json.encode in the
// documented canonical form (keys sorted, integers as integers, empty tables as {}); json.decode
// of any text gives that same form or `nil, err` — never a raised error or a broken state.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadPlugins, type PluginHost } from '../../src/lua/index.js';
import { fixtures, ok } from '../lua/helpers.js';
import { anyText, checkAsync, fc } from '../fixtures/fuzz.js';

let host: PluginHost;
before(async () => {
  host = await loadPlugins({ dirs: [join(fixtures, 'lua-fuzz')] });
  assert.deepEqual(host.errors, []);
});
after(() => host.close());

/** json.encode's documented output for a JSON value that went into Lua (see src/lua/json.ts). */
function canonical(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? BigInt(v).toString() : JSON.stringify(v);
  if (typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return v.length ? `[${v.map(canonical).join(',')}]` : '{}';
  const keys = Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (!keys.length) return '{}';
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
}

/** No lone surrogate in any string or key of v. */
function wellFormed(v: unknown): boolean {
  const ok = (t: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(t);
  if (typeof v === 'string') return ok(v);
  if (v === null || typeof v !== 'object') return true;
  return Object.entries(v).every(([k, x]) => ok(k) && wellFormed(x));
}

// Well-formed text only: Lua strings are bytes, so a lone surrogate cannot survive (it becomes U+FFFD).
const json = fc.jsonValue({ maxDepth: 6, stringUnit: 'grapheme' });

test('tool arguments → Lua → json.encode: the canonical JSON of the value, for any value', async () => {
  await checkAsync(300, json, async (v) => {
    assert.equal(await ok(host, 'echo_json', JSON.stringify({ v })), canonical(v));
  });
});

test('json.decode of any JSON text, then json.encode: the same canonical JSON', async () => {
  await checkAsync(300, json, async (v) => {
    const text = JSON.stringify(v, null, v !== null && typeof v === 'object' ? 1 : undefined);
    assert.equal(await ok(host, 'decode_encode', { s: text }), `ok ${canonical(v)}`);
  });
});

test('json.decode of any text: the value, or nil and "json.decode: invalid JSON: …"; the state keeps working', async () => {
  const text = fc.oneof(
    anyText(60),
    json.map((v) => JSON.stringify(v)).chain((s) => fc.nat({ max: s.length }).map((n) => s.slice(0, n))),
  );
  let lone = 0;
  await checkAsync(300, text, async (s) => {
    const out = await ok(host, 'decode_encode', { s });
    let parsed: unknown;
    let valid = true;
    try {
      parsed = JSON.parse(s);
    } catch {
      valid = false;
    }
    if (valid) assert.ok(out.startsWith('ok ') || /^nil json\.decode: nesting deeper/.test(out), out);
    else assert.match(out, /^nil json\.decode: invalid JSON: /);
    if (valid && out.startsWith('ok ') && wellFormed(parsed)) {
      assert.equal(out, `ok ${canonical(parsed)}`);
    } else if (valid && out.startsWith('ok ')) {
      // A lone surrogate (only as an escape in JSON text) becomes U+FFFD in a Lua string.
      lone++;
      assert.ok(out.includes('\uFFFD') || out.includes('\\u'), out);
    }
  });
  void lone;
});

test('json.decode of a non-string: nil and "json.decode: expected a string"', async () => {
  await checkAsync(
    100,
    fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
    ),
    async (v) => {
      assert.equal(await ok(host, 'decode_value', { v }), 'nil json.decode: expected a string');
    },
  );
});
