// Discovery, loading and registration: the reference's test_lua_plugin.c cases and every
// "bad input" rule for plugin files.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { loadPlugins, seedPluginDir, packageRoot, type PluginHost } from '../../src/lua/index.js';
import { fixtures, ok, pluginDir, tool } from './helpers.js';

describe('the reference cases', () => {
  test('plugins/ registers reverse_string with a description and a schema with properties.text', async () => {
    const host = await loadPlugins({ dirs: [seedPluginDir()] });
    try {
      assert.deepEqual(host.errors, []);
      const t = tool(host, 'reverse_string');
      assert.ok(t.description && t.description.length > 0);
      const schema = t.parameters as { type: string; properties: Record<string, unknown>; required: string[] };
      assert.equal(schema.type, 'object');
      assert.ok(schema.properties.text);
      assert.deepEqual(schema.required, ['text']);
      assert.equal(typeof t.invoke, 'function');
      assert.equal(await ok(host, 'reverse_string', { text: 'abc' }), 'cba');
    } finally {
      await host.close();
    }
  });

  test('a missing plugin directory is fine (and starts no worker)', async () => {
    const host = await loadPlugins({ dirs: ['/nonexistent/clm/plugins', join(fixtures, 'no-such-dir')] });
    assert.deepEqual(host.tools, []);
    assert.deepEqual(host.errors, []);
    await host.close();
  });

  test('sandbox self-check registers; failing and looping plugins register nothing and do not hang', async () => {
    const lines: string[] = [];
    const host = await loadPlugins({ dirs: [join(fixtures, 'plugins')], log: (l) => lines.push(l) });
    try {
      assert.deepEqual(
        host.tools.map((t) => t.name),
        ['sandbox_ok_marker'],
      );
      const marker = tool(host, 'sandbox_ok_marker');
      assert.equal(marker.hidden, true);
      assert.equal(marker.noPrompt, true);
      assert.equal(await ok(host, 'sandbox_ok_marker'), 'ok');
      const byPlugin = Object.fromEntries(host.errors.map((e) => [e.plugin, e.message]));
      assert.deepEqual(Object.keys(byPlugin).sort(), ['fail_explicit', 'fail_indirect', 'loop_at_load']);
      assert.match(byPlugin.fail_explicit, /^fail_explicit\.lua:3: fail_explicit: deliberate load failure$/);
      assert.match(byPlugin.fail_indirect, /fail_indirect\.lua:4: attempt to call a nil value \(field 'missing_function'\)/);
      assert.match(byPlugin.loop_at_load, /execution time budget \(500 ms at load\)/);
      for (const e of host.errors) assert.ok(e.file.endsWith(`${e.plugin}.lua`));
      // Load failures are logged, naming the plugin.
      assert.ok(lines.some((l) => l.includes('fail_explicit') && l.includes('deliberate load failure')));
    } finally {
      await host.close();
    }
  });
});

describe('registration rules and bad plugin files', () => {
  let host: PluginHost;
  let logs: string[];
  before(async () => {
    logs = [];
    host = await loadPlugins({
      dirs: [join(fixtures, 'lua-load'), join(fixtures, 'lua-load-agent')],
      reservedNames: ['read_file', 'write_file'],
      toolsConfig: {
        m_config_file: { greeting: 'hi', list: [1, 2], nested: { on: true } },
        n_config_by_tool: { by: 'tool name' },
        o_config_tool: { ignored: 'tool name entry is only used when the file name has none' },
        o_config_none: undefined,
        fn: () => 1,
      },
      log: (l) => logs.push(l),
    });
  });
  after(() => host.close());

  const err = (plugin: string) => host.errors.find((e) => e.plugin === plugin)?.message ?? '(no error)';

  test('tools appear in load order: directories in order, files by name, registration order', () => {
    assert.deepEqual(
      host.tools.map((t) => t.name),
      [
        'dup_tool',
        'k_schema_tool',
        'k_plain_tool',
        'k_names_tool',
        'l_tool',
        'm_config_tool',
        'n_config_by_tool',
        'o_config_tool',
        'q_tool',
        'agent_only_tool',
      ],
    );
  });

  test('the first plugin to claim a name keeps it; a duplicate is a load error naming the name', async () => {
    assert.equal(await ok(host, 'dup_tool'), 'from a_dup1');
    assert.equal(err('b_dup2'), "b_dup2.lua:1: clm.tool_register: a tool named 'dup_tool' is already registered");
    assert.match(err('a_dup_agent'), /a tool named 'dup_tool' is already registered/);
  });

  test('builtin and MCP names passed as reserved cannot be taken', () => {
    assert.match(err('c_reserved'), /a tool named 'read_file' is already registered/);
  });

  test('the mcp__ prefix is reserved for MCP servers (they connect after plugins load)', () => {
    assert.equal(
      err('c_squat_mcp'),
      "c_squat_mcp.lua:2: clm.tool_register: the prefix 'mcp__' is reserved for MCP server tools ('mcp__ev__echo')",
    );
  });

  test('invoke must be a function; params_schema must be a table; names must be usable', () => {
    assert.match(err('d_noninvoke'), /clm\.tool_register: 'invoke' must be a function/);
    assert.match(err('e_schema'), /'params_schema' must be a table/);
    assert.match(err('j_badname'), /invalid tool name 'bad name!'/);
  });

  test('syntax errors, memory exhaustion, and http/sleep at load time are load errors', () => {
    assert.match(err('f_syntax'), /^f_syntax\.lua:1: .*'}' expected/);
    assert.match(err('g_memory'), /not enough memory/);
    assert.match(err('h_http_at_load'), /http\.get may only be called from a tool invocation .*not at load time/);
    assert.match(err('i_sleep_at_load'), /clm\.sleep may only be called from a tool invocation/);
  });

  test('every load failure is logged with the plugin name', () => {
    for (const e of host.errors)
      assert.ok(
        logs.some((l) => l.includes(e.plugin) && l.includes(e.message)),
        e.plugin,
      );
  });

  test('a caught registration error does not spoil the plugin', async () => {
    // Called straight from pcall, so there is no Lua position to prefix (as with luaL_error).
    assert.equal(await ok(host, 'l_tool'), "false clm.tool_register: a tool named 'dup_tool' is already registered");
    assert.equal(tool(host, 'l_tool').noPrompt, true);
  });

  test('a plugin that registers nothing loads without error', () => {
    assert.equal(err('p_nothing'), '(no error)');
  });

  test('registering after load time is refused', async () => {
    assert.match(await ok(host, 'q_tool'), /clm\.tool_register may only be called at load time/);
  });

  test('schemas serialise with sorted keys; empty required/enum stay arrays; fields map to the ToolDef', () => {
    const t = tool(host, 'k_schema_tool');
    assert.equal(
      JSON.stringify(t.parameters),
      '{"properties":{"alpha":{"description":"first","type":"integer"},"nested":{"properties":{},"required":[],"type":"object"},' +
        '"zeta":{"enum":["b","a"],"type":"string"}},"required":[],"type":"object"}',
    );
    assert.equal(t.description, 'schema checks');
    assert.equal(t.timeoutMs, 1234);
    assert.equal(t.noPrompt, undefined);
    assert.equal(t.hidden, undefined);
    assert.equal(
      JSON.stringify(tool(host, 'k_names_tool').parameters),
      '{"items":{"required":[]},"properties":{"enum":{},"required":{"type":"boolean"}},"required":["required"],"type":"object"}',
    );
    const plain = tool(host, 'k_plain_tool');
    assert.equal(plain.parameters, undefined);
    assert.equal(plain.description, '');
    assert.equal(plain.timeoutMs, 30_000, 'without timeout_ms the call deadline is the CPU budget default, in wall time too');
  });

  test('clm.config: the tools entry by file name, else by tool name, else an empty table', async () => {
    assert.equal(await ok(host, 'm_config_tool'), '{"greeting":"hi","list":[1,2],"nested":{"on":true}}');
    assert.equal(await ok(host, 'n_config_by_tool'), '{"by":"tool name"}');
    // o_config_none has no entry by file name (undefined is dropped) but its tool name has one.
    assert.equal(await ok(host, 'o_config_tool'), 'table {"ignored":"tool name entry is only used when the file name has none"}');
  });

  test('a plugin without any config entry sees an empty table', async () => {
    const d = pluginDir({
      'cfg.lua': 'clm.tool_register("cfg_t", { invoke = function(a, ctx) ctx:complete(type(clm.config) .. json.encode(clm.config)) end })',
    });
    const h = await loadPlugins({ dirs: [d.dir], toolsConfig: { other: { x: 1 } } });
    try {
      assert.equal(await ok(h, 'cfg_t'), 'table{}');
    } finally {
      await h.close();
      d.remove();
    }
  });

  test('a file over the size limit is refused with a message; other files still load', async () => {
    const big = '-- padding\n'.repeat(100_000) + 'clm.tool_register("big_t", { invoke = function(a, ctx) ctx:complete("x") end })\n';
    const d = pluginDir({
      'big.lua': big,
      'small.lua': 'clm.tool_register("small_t", { invoke = function(a, ctx) ctx:complete("small") end })',
    });
    const h = await loadPlugins({ dirs: [d.dir] });
    try {
      assert.deepEqual(
        h.tools.map((t) => t.name),
        ['small_t'],
      );
      assert.equal(h.errors.length, 1);
      assert.equal(h.errors[0].plugin, 'big');
      assert.match(h.errors[0].message, /plugin file is too large \(\d+ bytes; the limit is 1048576\)/);
      assert.equal(await ok(h, 'small_t'), 'small');
    } finally {
      await h.close();
      d.remove();
    }
  });

  test('precompiled bytecode is refused (text-only loading)', async () => {
    const d = pluginDir({ 'bc.lua': new Uint8Array([0x1b, 0x4c, 0x75, 0x61, 0x54, 0x00, 0x19, 0x93]) });
    const h = await loadPlugins({ dirs: [d.dir] });
    try {
      assert.equal(h.tools.length, 0);
      assert.match(h.errors[0].message, /attempt to load a binary chunk \(mode is 't'\)/);
    } finally {
      await h.close();
      d.remove();
    }
  });

  test('only regular *.lua files are plugins', async () => {
    const d = pluginDir({
      'x.lua.txt': 'error("not a plugin")',
      '.lua': 'error("too short a name")',
      'ok.lua': 'clm.tool_register("ok_t", { invoke = function(a, ctx) ctx:complete("ok") end })',
    });
    const h = await loadPlugins({ dirs: [d.dir] });
    try {
      assert.deepEqual(
        h.tools.map((t) => t.name),
        ['ok_t'],
      );
      assert.deepEqual(h.errors, []);
    } finally {
      await h.close();
      d.remove();
    }
  });
});

test('the packaged seed directory is found from the sources', () => {
  const root = packageRoot();
  assert.ok(root);
  assert.equal(seedPluginDir(), join(root, 'plugins'));
});

test('an idle plugin host does not keep the process alive (even without close)', () => {
  const index = pathToFileURL(join(fixtures, '..', '..', 'src', 'lua', 'index.ts')).href;
  const d = pluginDir({
    'main.mts': `import { loadPlugins, seedPluginDir } from ${JSON.stringify(index)};
const host = await loadPlugins({ dirs: [seedPluginDir()] });
const t = host.tools.find((x) => x.name === 'reverse_string');
t.invoke({ name: 't', args: '{"text":"ab"}', outputCap: 1000, timeoutMs: 0, signal: new AbortController().signal, done: false,
  complete: (o) => console.log('out', o), fail: (m) => console.log('fail', m), notify() {} });
`,
  });
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(d.dir, 'main.mts')], {
      encoding: 'utf8',
      timeout: 30_000,
      cwd: join(fixtures, '..', '..'),
    });
    assert.equal(r.signal, null, 'the process had to be killed');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'out ba\n');
  } finally {
    d.remove();
  }
});
