// Fuzzing config values: any table under the known keys (right types, wrong types, nested
// junk) is accepted as config or refused with a ConfigError that names the file and key —
// never another error. A few cases go all the way through config.lua evaluated in Lua.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateValues } from '../../src/config/validate.js';
import { ConfigError } from '../../src/config/errors.js';
import { loadConfig } from '../../src/config/load.js';
import { check, checkAsync, fc } from '../fixtures/fuzz.js';

const TOP = [
  'agent',
  'agents',
  'model',
  'providers',
  'system_prompt',
  'tools',
  'volatile_tools',
  'mcp_servers',
  'show_thinking',
  'expand_output',
  'mcp_ready_timeout_ms',
  'typo-key',
];
const PROVIDER = ['kind', 'url', 'api_key', 'rate_tokens_per_sec', 'rate_burst', 'disable_parallel_tool_calls', 'max_tokens', 'models'];
const MCP = ['name', 'command', 'transport', 'url', 'api_key', 'timeout_ms', 'env', 'cwd'];

// Values of the kinds a Lua table converts to (no NaN/inf: Lua gives those no JSON-like form here).
const scalar = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('openai', 'anthropic', 'http://127.0.0.1:1/v1', 'p/m', 'true', 'false', ''),
  fc.integer({ min: -5, max: 1e6 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }),
  fc.boolean(),
);
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 3 }),
  ),
}));
const provider = fc.dictionary(fc.constantFrom(...PROVIDER), value, { maxKeys: 5 });
const top = fc
  .record({
    base: fc.dictionary(fc.constantFrom(...TOP), value, { maxKeys: 6 }),
    providers: fc.option(fc.dictionary(fc.constantFrom('p', 'q', 'local'), fc.oneof(provider, value), { maxKeys: 2 }), { nil: undefined }),
    mcp: fc.option(fc.array(fc.oneof(fc.dictionary(fc.constantFrom(...MCP), value, { maxKeys: 5 }), value), { maxLength: 2 }), {
      nil: undefined,
    }),
  })
  .map(({ base, providers, mcp }) => ({ ...base, ...(providers ? { providers } : {}), ...(mcp ? { mcp_servers: mcp } : {}) }));

test('validateValues: any table is config or a ConfigError naming config.lua and the key', () => {
  check(1500, top, (raw) => {
    try {
      validateValues(raw as Record<string, unknown>, { label: 'config.lua', prefix: '', warnings: [] });
    } catch (e) {
      assert.ok(e instanceof ConfigError, `${(e as Error)?.name}: ${(e as Error)?.message}`);
      assert.match(e.message, /^config\.lua: \S/);
    }
  });
});

/** A Lua literal for a JSON-like value (strings byte-escaped, so any text is safe). */
function lua(v: unknown): string {
  if (typeof v === 'string') return `"${[...new TextEncoder().encode(v)].map((b) => `\\${b}`).join('')}"`;
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toPrecision(17);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `{${v.map(lua).join(', ')}}`;
  return `{${Object.entries(v as object)
    .map(([k, x]) => `[${lua(k)}] = ${lua(x)}`)
    .join(', ')}}`;
}

test('loadConfig: any such config.lua loads or fails with a ConfigError, never another error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'clm-fuzz-config-'));
  try {
    await checkAsync(40, top, async (raw) => {
      writeFileSync(join(dir, 'config.lua'), `return ${lua(raw)}\n`);
      try {
        await loadConfig({ dir });
      } catch (e) {
        assert.ok(e instanceof ConfigError, `${(e as Error)?.name}: ${(e as Error)?.message}`);
        // A type error names config.lua and the key; a missing profile names the profile.
        assert.match(e.message, /^config\.lua(:\d+)?: \S|^agent '.*' not found/s);
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
