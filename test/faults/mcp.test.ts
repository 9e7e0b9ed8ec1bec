// Fault battery, MCP servers: one that crashes on a call, one that never answers initialize,
// one that never answers a call. The turn always ends, each failure is named, and the session
// holds the tool results the model saw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { REPO, show } from '../fixtures/run-cli.js';
import { faultSuite } from '../fixtures/fault-suite.js';
import { tally } from '../fixtures/tally.js';

const SERVER = join(REPO, 'test', 'fixtures', 'mcp', 'tool-server.mjs');
const { mock, dirs, run } = await faultSuite();

function mcpConfig(extraArgs: string[], timeoutMs: number, readyMs = 10_000): void {
  const command = ['node', SERVER, ...extraArgs].map((a) => JSON.stringify(a)).join(', ');
  dirs.write(
    'config.lua',
    `return {
  tools = { web_search = { api_key = clm.secrets.search } },
  mcp_ready_timeout_ms = ${readyMs},
  mcp_servers = { { name = "s", command = { ${command} }, timeout_ms = ${timeoutMs} } },
}\n`,
  );
}

const toolMessages = () => {
  const [file] = readdirSync(dirs.sessions).filter((n) => n.endsWith('.jsonl'));
  return readFileSync(join(dirs.sessions, file!), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((l) => l.role === 'tool');
};

test('an MCP server that crashes during a call: the call fails by name, the turn goes on, the server restarts', async () => {
  mcpConfig([], 10_000);
  mock.push(oa.toolCall('mcp__s__crash', {}, 'c1'), oa.text('carried on'));
  const r = await run(['-o', 'crash it'], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'carried on\n');
  assert.match(r.stderr, /\[x mcp__s__crash\] \[tool failed: MCP server disconnected\]/);
  assert.match(r.stderr, /notice: mcp: s: server exited; restarting/);
  assert.equal(mock.posts[1]!.json.messages.at(-1).content, '[tool failed: MCP server disconnected]');
  assert.deepEqual(
    toolMessages().map((m) => m.content),
    ['[tool failed: MCP server disconnected]'],
  );
  tally('faults', 1);
});

test('an MCP server that never answers initialize: a notice after its timeout, the run goes on without it', async () => {
  mcpConfig(['--silent'], 500);
  mock.push(oa.text('no tools needed'));
  const r = await run(['-o', 'hi'], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'no tools needed\n');
  assert.match(r.stderr, /notice: mcp: s: connect failed \(no answer to initialize within 500 ms\)/);
  const names = (mock.posts[0]!.json.tools ?? []).map((t: any) => t.function.name as string);
  assert.ok(!names.some((n: string) => n.startsWith('mcp__')), names.join(' '));
  tally('faults', 1);
});

test('an MCP server that never answers a call: "timed out after N ms", not "cancelled"', async () => {
  // The server's timeout also bounds its start (initialize): 10 s leaves a loaded machine time
  // to start it, so what times out is the call.
  mcpConfig([], 10_000);
  mock.push(oa.toolCall('mcp__s__slow', { ms: 120_000 }, 'c1'), oa.text('gave up on it'));
  const r = await run(['-o', 'wait for it'], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'gave up on it\n');
  assert.match(r.stderr, /\[timeout mcp__s__slow\] \[tool failed: timed out after 10000 ms\]/);
  assert.equal(mock.posts[1]!.json.messages.at(-1).content, '[tool failed: timed out after 10000 ms]');
  assert.deepEqual(
    toolMessages().map((m) => m.content),
    ['[tool failed: timed out after 10000 ms]'],
  );
  tally('faults', 1);
});
