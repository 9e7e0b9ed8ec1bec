// mcp_servers validation: the C program's messages for bad entries, defaults, and tool names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMcpServers } from '../../src/mcp/config.js';
import { mcpToolName } from '../../src/mcp/tool-names.js';
import { buildToolDefs } from '../../src/mcp/tool-defs.js';

test('bad entries are skipped with the original messages', () => {
  const { servers, errors } = parseMcpServers([
    { command: ['x'] },
    { name: '' },
    'not a table',
    { name: 'web', transport: 'http' },
    { name: 'fs' },
    { name: 'fs2', command: [] },
    { name: 'fs3', command: 'node server.js' },
    { name: 'odd', transport: 'carrier-pigeon', command: ['x'] },
    { name: 'badurl', transport: 'http', url: 'not a url' },
    { name: 'ok', command: ['node', 'server.js'], timeout_ms: -5 },
    { name: 'ok', command: ['again'] },
  ]);
  assert.deepEqual(errors, [
    "mcp: skipping server with no 'name'",
    "mcp: skipping server with no 'name'",
    "mcp: skipping server with no 'name'",
    "mcp: web: http transport needs 'url'",
    "mcp: fs: stdio transport needs a non-empty 'command' array",
    "mcp: fs2: stdio transport needs a non-empty 'command' array",
    "mcp: fs3: stdio transport needs a non-empty 'command' array",
    'mcp: odd: unknown transport "carrier-pigeon" (use "stdio" or "http")',
    'mcp: badurl: invalid \'url\' "not a url"',
    "mcp: ok: 'timeout_ms' must be a positive number; using 30000",
    'mcp: ok: duplicate server name; skipped',
  ]);
  assert.deepEqual(servers, [{ name: 'ok', transport: 'stdio', command: ['node', 'server.js'], timeoutMs: 30000 }]);
});

test('defaults: stdio transport, 30 s timeout; http keeps url and key', () => {
  const { servers, errors } = parseMcpServers([
    { name: 'a', command: ['srv'] },
    { name: 'b', transport: 'http', url: 'https://example.com/mcp', api_key: 'sk-1', timeout_ms: 1500 },
  ]);
  assert.deepEqual(errors, []);
  assert.deepEqual(servers, [
    { name: 'a', transport: 'stdio', command: ['srv'], timeoutMs: 30000 },
    { name: 'b', transport: 'http', command: [], url: 'https://example.com/mcp', apiKey: 'sk-1', timeoutMs: 1500 },
  ]);
  assert.deepEqual(parseMcpServers(undefined), { servers: [], errors: [] });
  // A Lua array converted to an object with numeric keys is accepted too.
  assert.equal(parseMcpServers({ 1: { name: 'x', command: ['y'] } }).servers.length, 1);
});

test('tool names: mcp__<server>__<tool>, characters providers refuse become "_"', () => {
  assert.equal(mcpToolName('fs', 'read_file'), 'mcp__fs__read_file');
  assert.equal(mcpToolName('my server', 'a.b/c'), 'mcp__my_server__a_b_c');
  const seen: string[] = [];
  const defs = buildToolDefs(
    's',
    [
      { name: 'x.y', description: 'first', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } },
      { name: 'x_y' },
      { name: 'plain', inputSchema: { properties: {} } },
    ],
    1234,
    async () => {},
    (tool) => seen.push(tool),
  );
  assert.deepEqual(
    defs.map((d) => [d.name, d.description, d.parameters, d.timeoutMs, d.noPrompt]),
    [
      ['mcp__s__x_y', 'first', { type: 'object', properties: { a: { type: 'string' } } }, 1234, false],
      ['mcp__s__plain', 'plain', { type: 'object' }, 1234, false],
    ],
  );
  assert.deepEqual(seen, ['x_y']);
});

test('an MCP tool is read-only only when its readOnlyHint is true', () => {
  const defs = buildToolDefs(
    's',
    [
      { name: 'look', annotations: { readOnlyHint: true } },
      { name: 'touch', annotations: { readOnlyHint: false } },
      { name: 'vague', annotations: { readOnlyHint: 'yes' } },
      { name: 'plain' },
    ],
    0,
    async () => {},
  );
  assert.deepEqual(
    defs.map((d) => [d.name, d.readOnly ?? false]),
    [
      ['mcp__s__look', true],
      ['mcp__s__touch', false],
      ['mcp__s__vague', false],
      ['mcp__s__plain', false],
    ],
  );
});

test("toolSync replaces a server's tools in the target and reports clashes", async () => {
  const { toolSync } = await import('../../src/mcp/tool-sync.js');
  const reg = new Map<string, unknown>([['mcp__a__taken', {}]]);
  const target = {
    addTool(d: { name: string }) {
      if (reg.has(d.name)) throw new Error('already registered');
      reg.set(d.name, d);
    },
    removeTool(n: string) {
      if (!reg.delete(n)) throw new Error('no such tool');
    },
  };
  const errors: string[] = [];
  const sync = toolSync(target, (e) => errors.push(e));
  const def = (name: string) => ({ name, invoke() {} });
  sync('a', [def('mcp__a__x'), def('mcp__a__taken')]);
  sync('b', [def('mcp__b__y')]);
  assert.deepEqual([...reg.keys()].sort(), ['mcp__a__taken', 'mcp__a__x', 'mcp__b__y']);
  assert.deepEqual(errors, ['mcp: a: tool mcp__a__taken not registered: already registered']);
  sync('a', []);
  assert.deepEqual([...reg.keys()].sort(), ['mcp__a__taken', 'mcp__b__y'], 'only what it registered is removed');
  sync('a', [def('mcp__a__z')]);
  assert.deepEqual([...reg.keys()].sort(), ['mcp__a__taken', 'mcp__a__z', 'mcp__b__y']);
});
