// The real `clm` binary with Lua plugins (-p, the packaged seeds, a broken plugin) and MCP
// servers from config.lua (the npm reference server over stdio, a command that does not exist).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { createToolServer } from '../fixtures/mcp/tool-server.mjs';
import { serveFetch } from '../mcp/helpers.js';
import { show, waitFor, REPO } from '../fixtures/run-cli.js';
import { cliSuite, jsonLines } from '../fixtures/cli-suite.js';

// Each test names its plugin directory (-p) itself, or none to get the packaged seeds.
const { mock, dirs, run, spawn } = await cliSuite({ dirs: 'each', args: (m) => ['-u', m.base] });
const EVERYTHING = join(REPO, 'node_modules', '.bin', 'mcp-server-everything');

const toolNames = (i: number): string[] => (mock.posts[i]!.json.tools ?? []).map((t: any) => t.function.name);
const toolResult = (i: number, id: string): string =>
  mock.posts[i]!.json.messages.find((m: any) => m.role === 'tool' && m.tool_call_id === id)?.content;

const SHOUT = `clm.tool_register("shout", {
  description = "Upper-case a text",
  params_schema = { type = "object", properties = { text = { type = "string" } }, required = { "text" } },
  invoke = function(args, ctx) ctx:complete(string.upper(args.text) .. "!") end,
})
`;

function pluginDir(files: Record<string, string>): string {
  const d = join(dirs.root, 'plugins-test');
  mkdirSync(d, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
  return d;
}

test('-p DIR: the model calls a plugin tool and its result reaches the next request', async () => {
  const d = pluginDir({ 'shout.lua': SHOUT });
  mock.push(oa.toolCall('shout', { text: 'hey there' }, 's1'), oa.text('done'));
  const r = await run(['-p', d, '-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'done\n');
  assert.ok(toolNames(0).includes('shout'), toolNames(0).join(' '));
  assert.ok(!toolNames(0).includes('reverse_string'), '-p replaces the default plugin directory');
  const def = mock.posts[0]!.json.tools.find((t: any) => t.function.name === 'shout').function;
  assert.equal(def.description, 'Upper-case a text');
  assert.deepEqual(def.parameters.required, ['text']);
  assert.equal(toolResult(1, 's1'), 'HEY THERE!');
  assert.match(r.stderr, /\[tool: shout /);
});

test('no plugin directory configured: the packaged seed plugins load (reverse_string works)', async () => {
  mock.push(oa.toolCall('reverse_string', { text: 'héllo' }, 'r1'), oa.text('ok'));
  const r = await run(['-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  const names = toolNames(0);
  for (const n of ['reverse_string', 'read_file', 'list_dir']) assert.ok(names.includes(n), names.join(' '));
  assert.equal(toolResult(1, 'r1'), 'olléh');
  assert.doesNotMatch(r.stderr, /notice: plugin/, r.stderr);
});

test('a broken plugin: a message naming it, the other plugins and the run still work', async () => {
  const d = pluginDir({
    'shout.lua': SHOUT,
    'broken.lua': 'clm.tool_register("half", {\n  invoke = function(a, c) c:complete("x") end\n',
    'throws.lua': 'error("refusing to load")\n',
  });
  mock.push(oa.toolCall('shout', { text: 'still' }, 's1'), oa.text('fine'));
  const r = await run(['-p', d, '-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'fine\n');
  assert.match(r.stderr, /broken/, r.stderr);
  assert.match(r.stderr, /throws.*refusing to load|refusing to load.*throws/, r.stderr);
  assert.ok(!toolNames(0).includes('half'));
  assert.equal(toolResult(1, 's1'), 'STILL!');
});

test('MCP over stdio (server-everything): mcp__ev__echo is offered in the first request and round-trips', async () => {
  dirs.write(
    'config.lua',
    `return {
  mcp_servers = { { name = "ev", command = { ${JSON.stringify(EVERYTHING)}, "stdio" } } },
}
`,
  );
  mock.push(oa.toolCall('mcp__ev__echo', { message: 'ping from the model' }, 'm1'), oa.text('echoed'));
  const r = await run(['-p', dirs.empty, '-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'echoed\n');
  const names = toolNames(0);
  assert.ok(names.includes('mcp__ev__echo'), names.join(' '));
  assert.ok(names.filter((n) => n.startsWith('mcp__ev__')).length > 3);
  assert.equal(toolResult(1, 'm1'), 'Echo: ping from the model');
  assert.match(r.stderr, /mcp: ev: \d+ tools? registered/);
});

test('--deny-tools covers MCP tools that arrive after start-up', async () => {
  dirs.write(
    'config.lua',
    `return {
  mcp_servers = { { name = "ev", command = { ${JSON.stringify(EVERYTHING)}, "stdio" } } },
}
`,
  );
  mock.push(oa.toolCall('mcp__ev__echo', { message: 'x' }, 'm1'), oa.text('ok'));
  const r = await run(['-p', dirs.empty, '-S', '--deny-tools', 'mcp__*', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.match(toolResult(1, 'm1'), /^\[tool failed: denied by policy/);
});

test('an MCP command that does not exist: a message naming it, the run still answers', async () => {
  // A ready bound far beyond the run's own deadline: answering at all shows it did not wait for it.
  dirs.write(
    'config.lua',
    `return {
  mcp_ready_timeout_ms = 600000,
  mcp_servers = { { name = "ghost", command = { "/nonexistent/clm-no-such-mcp-server", "stdio" } } },
}
`,
  );
  mock.push(oa.text('answered anyway'));
  const r = await run(['-p', dirs.empty, '-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'answered anyway\n');
  assert.match(r.stderr, /mcp: ghost/);
  assert.match(r.stderr, /clm-no-such-mcp-server|ENOENT|not found|failed to start/i);
  assert.doesNotMatch(r.stderr, /not ready after/);
  assert.ok(!toolNames(0).some((n) => n.startsWith('mcp__')));
});

test('stream-json: start-up notices (a broken plugin, a missing MCP server) come after the start event', async () => {
  dirs.write(
    'config.lua',
    `return {
  mcp_servers = { { name = "ghost", command = { "/nonexistent/clm-no-such-mcp-server" } } },
}
`,
  );
  const d = pluginDir({ 'shout.lua': SHOUT, 'broken.lua': 'this is not lua\n' });
  mock.push(oa.streamText(['hi']));
  const r = await run(['-p', d, '--output-format', 'stream-json', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  const events = jsonLines(r.stdout);
  assert.equal(events[0]!.type, 'start', r.stdout);
  assert.ok(events[0]!.tools.includes('shout'));
  const notices = events.filter((e) => e.type === 'notice').map((e) => e.text as string);
  assert.ok(
    notices.some((t) => /broken/.test(t)),
    notices.join('\n'),
  );
  assert.ok(
    notices.some((t) => /mcp: ghost/.test(t)),
    notices.join('\n'),
  );
  assert.equal(events.at(-1)!.type, 'result');
});

test('plugins across runs: a second run with the same plugins works, an edited plugin is picked up', async () => {
  const d = pluginDir({ 'shout.lua': SHOUT });
  const once = async (tool: string, args: object) => {
    mock.push(oa.toolCall(tool, args, 'c'), oa.text('ok'));
    const r = await run(['-p', d, '-S', '-o', 'q']);
    assert.equal(r.code, 0, show(r));
    return r;
  };
  await once('shout', { text: 'one' });
  assert.equal(toolResult(1, 'c'), 'ONE!');
  await once('shout', { text: 'two' });
  assert.ok(toolNames(2).includes('shout'));
  assert.equal(toolResult(3, 'c'), 'TWO!');
  // Replace the tool (same size and a restored mtime would fool a stat-only check; use new text).
  writeFileSync(
    join(d, 'shout.lua'),
    SHOUT.replaceAll('shout', 'whisper').replace('string.upper(args.text) .. "!"', 'string.lower(args.text)'),
  );
  const later = new Date(Date.now() + 5000);
  utimesSync(join(d, 'shout.lua'), later, later);
  await once('whisper', { text: 'QUIET' });
  assert.ok(toolNames(4).includes('whisper'), toolNames(4).join(' '));
  assert.ok(!toolNames(4).includes('shout'), 'the old tool is gone');
  assert.equal(toolResult(5, 'c'), 'quiet');
});

// With the plugin schema cache (src/cli/plugin-tools.ts) a cache hit registers the cached tools
// and the run can end before the worker reports its load errors: the notice is lost.
test('a broken plugin is reported on every run, not only the first', async () => {
  const d = pluginDir({ 'shout.lua': SHOUT, 'broken.lua': 'this is not lua\n' });
  for (let i = 0; i < 2; i++) {
    mock.push(oa.text('ok'));
    const r = await run(['-p', d, '-S', '-o', 'q']);
    assert.equal(r.code, 0, show(r));
    assert.match(r.stderr, /plugin broken/, `run ${i + 1}:\n${r.stderr}`);
  }
});

test('MCP over streamable HTTP with a bearer key from clm.secrets; the key stays out of the debug log', async () => {
  const KEY = 'mcp-bearer-secret-31337';
  const auth: (string | null)[] = [];
  const server = createToolServer();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await server.connect(transport);
  const http = await serveFetch(async (req) => {
    auth.push(req.headers.get('authorization'));
    return transport.handleRequest(req);
  });
  try {
    dirs.write('secrets.lua', `return { web = "${KEY}" }\n`);
    dirs.write(
      'config.lua',
      `return {
  mcp_servers = { { name = "web", transport = "http", url = "${http.url}", api_key = clm.secrets.web } },
}
`,
    );
    mock.push(oa.toolCall('mcp__web__echo', { text: 'over http' }, 'h1'), oa.text('ok'));
    const log = join(dirs.root, 'debug.log');
    const r = await run(['-p', dirs.empty, '-S', '-o', 'q'], { env: { CLM_DEBUG_LOG: log } });
    assert.equal(r.code, 0, show(r));
    assert.ok(toolNames(0).includes('mcp__web__echo'), toolNames(0).join(' '));
    assert.equal(toolResult(1, 'h1'), 'over http');
    assert.ok(auth.length > 0 && auth.every((a) => a === `Bearer ${KEY}`), JSON.stringify(auth));
    assert.ok(!readFileSync(log, 'utf8').includes(KEY));
  } finally {
    await server.close().catch(() => {});
    await http.close();
  }
});

test('an MCP server that never answers initialize: the run waits only up to the bound, then answers', async () => {
  const silent = join(REPO, 'test', 'fixtures', 'mcp', 'tool-server.mjs');
  dirs.write(
    'config.lua',
    `return {
  mcp_ready_timeout_ms = 700,
  mcp_servers = { { name = "mute", command = { ${JSON.stringify(process.execPath)}, ${JSON.stringify(silent)}, "--silent" } } },
}
`,
  );
  mock.push(oa.text('did not wait forever'));
  const r = await run(['-p', dirs.empty, '-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'did not wait forever\n');
  // It gave up at the bound (a run that ignored it would never answer: the server stays mute).
  assert.match(r.stderr, /mcp: mute: not ready after 0\.7 s; continuing without it/, r.stderr);
  assert.ok(!toolNames(0).some((n) => n.startsWith('mcp__mute__')));
});

test('policy patterns are judged against plugin and MCP tools too: no false "matches no tool"', async () => {
  const tools = join(REPO, 'test', 'fixtures', 'mcp', 'tool-server.mjs');
  dirs.write(
    'config.lua',
    `return {
  mcp_servers = { { name = "t", command = { ${JSON.stringify(process.execPath)}, ${JSON.stringify(tools)} } } },
}
`,
  );
  const d = pluginDir({ 'shout.lua': SHOUT });
  // Twice: the second run registers the plugin tools from the schema cache, before the worker is up.
  for (let i = 0; i < 2; i++) {
    mock.push(oa.text('ok'));
    const r = await run(['-p', d, '-S', '--deny-tools', 'shout,mcp__t__echo,nosuch_*', '-o', 'q']);
    assert.equal(r.code, 0, show(r));
    const names = toolNames(i);
    assert.ok(!names.includes('shout') && !names.includes('mcp__t__echo'), names.join(' '));
    assert.ok(names.includes('mcp__t__mixed'), names.join(' '));
    assert.doesNotMatch(r.stderr, /'(shout|mcp__t__echo)' matches no tool/, r.stderr);
    assert.match(r.stderr, /^notice: --deny-tools: 'nosuch_\*' matches no tool$/m, r.stderr);
  }
});

test('an MCP server that joins after start-up: its tools are counted once it is ready', async () => {
  const tools = join(REPO, 'test', 'fixtures', 'mcp', 'tool-server.mjs');
  dirs.write(
    'config.lua',
    `return {
  mcp_ready_timeout_ms = 100,
  mcp_servers = { { name = "late", command = { ${JSON.stringify(process.execPath)}, ${JSON.stringify(tools)}, "--start-delay=800" } } },
}
`,
  );
  // The reply waits until the server has joined, so the run is still going when it does.
  let joined = false;
  mock.push({
    handle: async (_req, res) => {
      const end = Date.now() + 15_000;
      while (!joined && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify((oa.text('ok') as { body: object }).body));
    },
  });
  const c = spawn(['-p', dirs.empty, '-S', '--deny-tools', 'mcp__late__echo,nosuch_*', '-o', 'q']);
  await waitFor(() => /mcp: late: \d+ tools? registered/.test(c.stderr), 'the late server', 15_000);
  joined = true;
  const r = await c.result;
  assert.equal(r.code, 0, show(r));
  assert.match(r.stderr, /not ready after/);
  assert.match(r.stderr, /^notice: --deny-tools: 'nosuch_\*' matches no tool$/m, r.stderr);
  assert.doesNotMatch(r.stderr, /'mcp__late__echo' matches no tool/, r.stderr);
});

// A bare JSON-RPC stdio server: one tool whose result is one line of `bytes` bytes.
const BIG_SERVER = `
let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf('\\n')) >= 0) {
    const m = JSON.parse(buf.slice(0, i));
    buf = buf.slice(i + 1);
    if (m.id === undefined) continue;
    let result;
    if (m.method === 'initialize')
      result = { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'big', version: '1' } };
    else if (m.method === 'tools/list') result = { tools: [{ name: 'big', inputSchema: { type: 'object' } }] };
    else if (m.method === 'tools/call') result = { content: [{ type: 'text', text: 'B'.repeat(m.params.arguments.bytes) }] };
    else result = {};
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) + '\\n');
  }
});
`;

test('an MCP result over the stdio message limit: the model is told it was too large, not that the server went away', async () => {
  const server = join(dirs.root, 'big-server.cjs');
  writeFileSync(server, BIG_SERVER);
  dirs.write(
    'config.lua',
    `return { mcp_servers = { { name = "b", command = { ${JSON.stringify(process.execPath)}, ${JSON.stringify(server)} } } } }\n`,
  );
  mock.push(oa.toolCall('mcp__b__big', { bytes: 11 * 1024 * 1024 }, 'c1'), oa.text('ok'));
  const r = await run(['-p', dirs.empty, '-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(toolResult(1, 'c1'), "[tool failed: the MCP server's reply was larger than 10 MiB, the most clm reads from a stdio server]");
  assert.match(r.stderr, /mcp: b: a message from the server was larger than 10 MiB; restarting it/);
});

test('-p naming a file, not a directory: a notice, no stack trace, the run goes on', async () => {
  const file = join(dirs.root, 'not-a-dir.lua');
  writeFileSync(file, SHOUT);
  mock.push(oa.text('fine'));
  const r = await run(['-p', file, '-S', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'fine\n');
  assert.match(
    r.stderr,
    new RegExp(
      `notice: plugins: cannot read the plugin directory ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not a directory; no plugins loaded from it`,
    ),
  );
  assert.doesNotMatch(r.stderr, /at .*\.js:\d+/);
});
