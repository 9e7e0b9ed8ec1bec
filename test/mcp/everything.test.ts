// Against the reference server from npm (@modelcontextprotocol/server-everything) over stdio.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { connectMcpServers, type McpManager } from '../../src/mcp/index.js';
import { findTool, invoke } from './helpers.js';

const bin = fileURLToPath(new URL('../../node_modules/.bin/mcp-server-everything', import.meta.url));
let mcp: McpManager;
const notices: string[] = [];
const logs: string[] = [];

before(async () => {
  process.env.CLM_TEST_MARK = 'inherited-env-ok';
  process.env.CLM_API_KEY = 'sk-must-not-leak';
  mcp = connectMcpServers([{ name: 'everything', command: [bin, 'stdio'], timeout_ms: 10_000 }], {
    onNotice: (t) => notices.push(t),
    log: (l) => logs.push(l),
  });
  const report = await mcp.waitReady(60_000);
  delete process.env.CLM_TEST_MARK;
  delete process.env.CLM_API_KEY;
  assert.deepEqual(report, { ready: ['everything'], failed: [], pending: [] });
});

after(() => mcp.close());

test('tools are listed as gated mcp__everything__* with their schemas', () => {
  const tools = mcp.tools();
  const echo = findTool(tools, 'mcp__everything__echo');
  assert.ok(echo, tools.map((t) => t.name).join(' '));
  assert.equal(echo.description, 'Echoes back the input string');
  assert.equal(echo.noPrompt, false);
  assert.equal(echo.timeoutMs, 10_000);
  const params = echo.parameters as any;
  assert.equal(params.type, 'object');
  assert.equal(params.properties.message.type, 'string');
  assert.ok(findTool(tools, 'mcp__everything__get-tiny-image'));
  assert.ok(tools.every((t) => t.name.startsWith('mcp__everything__')));
  assert.ok(notices.includes(`mcp: everything: ${tools.length} tools registered`), notices.join('\n'));
  assert.ok(
    logs.some((l) => l.startsWith('mcp everything stderr: ')),
    'server stderr reaches the debug log',
  );
});

test('echo round trip', async () => {
  assert.deepEqual(await invoke(findTool(mcp.tools(), 'mcp__everything__echo'), { message: 'héllo "world"' }), {
    ok: true,
    text: 'Echo: héllo "world"',
  });
});

test('an image result keeps every item, the image summarised', async () => {
  const r = await invoke(findTool(mcp.tools(), 'mcp__everything__get-tiny-image'));
  assert.equal(r.ok, true);
  const lines = r.text.split('\n');
  assert.equal(lines[0], "Here's the image you requested:");
  assert.match(lines[1]!, /^\[image: image\/png, \d+ bytes\]$/);
  assert.ok(Number(/(\d+) bytes/.exec(lines[1]!)![1]) > 1000);
  assert.equal(lines[2], 'The image above is the MCP logo.');
});

test('a tool error (invalid arguments) is a failure with the server text', async () => {
  const r = await invoke(findTool(mcp.tools(), 'mcp__everything__echo'), {});
  assert.equal(r.ok, false);
  assert.match(r.text, /message/);
});

test('the server inherits the environment, except CLM_API_KEY', async () => {
  const r = await invoke(findTool(mcp.tools(), 'mcp__everything__get-env'));
  assert.equal(r.ok, true);
  assert.match(r.text, /inherited-env-ok/);
  assert.doesNotMatch(r.text, /sk-must-not-leak/);
  assert.ok(!logs.some((l) => l.includes('sk-must-not-leak')));
});
