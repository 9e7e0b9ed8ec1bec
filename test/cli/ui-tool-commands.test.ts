// `/tools` and `/mcp` over the real runtime: a real MCP server over stdio (test/fixtures/mcp),
// one that cannot start, a Lua plugin file; where each tool comes from and how the permission
// engine decides its calls under the flags and config.lua's rules (the same decision a call gets);
// a server reconnected by hand (a new process).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runtimeSuite } from '../fixtures/command-context.js';
import { makeDirs, REPO, waitFor } from '../fixtures/run-cli.js';
import { KEYS, spawnPty } from '../fixtures/pty-screen.js';
import { runCommand } from '../../src/cli/ui/commands.js';
import { complete } from '../../src/cli/ui/completion.js';
import { seedPluginDir } from '../../src/lua/paths.js';

const s = runtimeSuite();
const TOOL_SERVER = join(REPO, 'test', 'fixtures', 'mcp', 'tool-server.mjs');

const SHOUT = `clm.tool_register("shout", {
  description = "Upper-case a text",
  invoke = function(args, ctx) ctx:complete(string.upper(args.text)) end,
})
`;

function setup(): string {
  s.dirs.write(
    'config.lua',
    `return { model = "m/x", providers = { m = { url = "${s.mock.base}" } },
  mcp_servers = {
    { name = "ts", command = { ${JSON.stringify(process.execPath)}, ${JSON.stringify(TOOL_SERVER)} } },
    { name = "ghost", command = { "/nonexistent/clm-no-such-mcp-server" } },
  } }\n`,
  );
  const plugins = join(s.dirs.root, 'plugins-tools');
  mkdirSync(plugins, { recursive: true });
  writeFileSync(join(plugins, 'shout.lua'), SHOUT);
  return plugins;
}

/** The row of `name` in a listing, split at runs of two or more blanks. */
const rowOf = (text: string, name: string) =>
  text
    .split('\n')
    .map((l) => l.trim().split(/ {2,}/))
    .find((r) => r[0] === name);

test('/mcp: each server with its transport, tool count and state (a failure says why); /mcp reconnect NAME starts it again', async () => {
  setup();
  const { rt, ctx, printed } = await s.start([]);
  await waitFor(() => rt.mcpServers().every((x) => x.state !== 'connecting'), 'the servers up or failed');
  await runCommand('/mcp', ctx);
  const text = printed.at(-1)!.text;
  assert.match(text, /^mcp servers \(\/mcp reconnect NAME connects again, \/mcp login NAME logs in\):/);
  assert.deepEqual(rowOf(text, 'ts'), ['ts', 'stdio', '8 tools', 'connected']);
  const ghost = rowOf(text, 'ghost')!;
  assert.deepEqual(ghost.slice(0, 3), ['ghost', 'stdio', '0 tools']);
  assert.match(ghost[3]!, /^failed: failed to start \(.*\/nonexistent\/clm-no-such-mcp-server.*\)/);

  const before = rt.agent.toolNames.filter((n) => n.startsWith('mcp__ts__'));
  await runCommand('/mcp reconnect ts', ctx);
  assert.deepEqual(
    printed.slice(-2).map((p) => p.text),
    ['[mcp: ts: reconnecting]', '[mcp: ts: connected, 8 tools]'],
  );
  assert.deepEqual(
    rt.agent.toolNames.filter((n) => n.startsWith('mcp__ts__')),
    before,
    'its tools are offered again',
  );
  await runCommand('/mcp reconnect ghost', ctx);
  assert.match(printed.at(-1)!.text, /^mcp: ghost: failed: failed to start/);
  assert.equal(printed.at(-1)!.kind, 'error');
  await runCommand('/mcp reconnect nope', ctx);
  assert.deepEqual(printed.at(-1), { text: "mcp: no MCP server 'nope' (configured: ts, ghost)", kind: 'error' });
  await runCommand('/mcp now', ctx);
  assert.deepEqual(printed.at(-1), { text: 'usage: /mcp [reconnect NAME | login NAME]', kind: 'error' });
});

test('/tools: every tool, where it comes from (builtin, plugin file, MCP server) and how a call would be decided', async () => {
  const plugins = setup();
  const { rt, ctx, printed } = await s.start(['-p', plugins, '--deny-tools', 'mcp__ts__crash']);
  await waitFor(() => rt.mcpServers().every((x) => x.state !== 'connecting') && rt.agent.toolNames.includes('shout'), 'every source');
  await rt.ready;
  await waitFor(() => {
    printed.length = 0;
    void runCommand('/tools', ctx);
    return !!rowOf(printed.at(-1)?.text ?? '', 'shout')?.[1]?.includes('shout.lua');
  }, 'the plugin file known');
  const text = printed.at(-1)!.text;
  const total = rt.agent.toolNames.length;
  assert.match(text, new RegExp(`^tools \\(${total - 1} offered to the model, 1 not\\):`));
  assert.deepEqual(rowOf(text, 'read_file'), ['read_file', 'builtin', 'allow (default: the tool has no side effects)']);
  // Where the sandbox confines them, commands known to only read run.
  const reads = rt.sandbox.inForce === 'workspace-write' ? '; those that only read run' : '';
  assert.deepEqual(rowOf(text, 'shell_exec'), ['shell_exec', 'builtin', `ask (shell_exec: each command is decided by its rules${reads})`]);
  assert.deepEqual(rowOf(text, 'shout'), ['shout', `plugin ${join(plugins, 'shout.lua')}`, 'ask (default)']);
  assert.deepEqual(rowOf(text, 'mcp__ts__echo'), ['mcp__ts__echo', 'mcp server ts', 'ask (default)']);
  assert.deepEqual(rowOf(text, 'mcp__ts__crash'), ['mcp__ts__crash', 'mcp server ts', 'deny (mcp__ts__crash, --deny-tools); not offered']);
});

test('/tools with --allow-tools: the named tools are allowed by the flag, the others denied and not offered', async () => {
  const { ctx, printed } = await s.start(['-u', s.mock.base, '--allow-tools', 'list_dir,shell_exec', '-p', seedPluginDir()]);
  await waitFor(() => {
    void runCommand('/tools', ctx);
    return !!rowOf(printed.at(-1)?.text ?? '', 'reverse_string')?.[1]?.includes('.lua');
  }, 'the seed plugins loaded');
  const text = printed.at(-1)!.text;
  // The plugins clm ships, named by their file.
  assert.deepEqual(rowOf(text, 'reverse_string'), [
    'reverse_string',
    'seed plugin reverse.lua',
    'deny (reverse_string, not in --allow-tools); not offered',
  ]);
  assert.deepEqual(rowOf(text, 'shell_exec'), ['shell_exec', 'builtin', 'allow (shell_exec, --allow-tools)']);
  assert.deepEqual(rowOf(text, 'write_file'), ['write_file', 'builtin', 'deny (write_file, not in --allow-tools); not offered']);
  await runCommand('/mcp', ctx);
  assert.equal(printed.at(-1)!.text, 'mcp: no MCP servers (mcp_servers in config.lua)');
  assert.deepEqual(complete('/mcp re', ctx).now, { replace: 2, insert: 'reconnect ', candidates: [] });
});

test("/tools shows config.lua's permission rules deciding each tool, and a call of it is decided the same", async () => {
  const config = `return { model = "m/x", providers = { m = { url = "${s.mock.base}" } },
  permissions = {
    allow = { "write_file(**)", "shell_exec(git status *)" },
    ask = { "read_file(~/.ssh/**)" },
    deny = { "list_dir", "shell_exec(rm *)", "write_file(.git/**)" },
  } }\n`;
  s.dirs.write('config.lua', config);
  const { rt, ctx, printed } = await s.start([]);
  await rt.ready;
  const confined = rt.sandbox.inForce === 'workspace-write';
  const reads = confined ? '; those that only read run' : '';
  await runCommand('/tools', ctx);
  const text = printed.at(-1)!.text;
  const line = (rule: string) => `config.lua:${config.split('\n').findIndex((l) => l.includes(`"${rule}"`)) + 1}`;
  assert.deepEqual(rowOf(text, 'list_dir'), ['list_dir', 'builtin', `deny (list_dir in ${line('list_dir')})`]);
  assert.deepEqual(rowOf(text, 'write_file'), [
    'write_file',
    'builtin',
    `allow (write_file(**) in ${line('write_file(**)')}); some calls: deny write_file(.git/**)`,
  ]);
  assert.deepEqual(rowOf(text, 'read_file'), [
    'read_file',
    'builtin',
    'allow (default: the tool has no side effects); some calls: ask read_file(~/.ssh/**)',
  ]);
  assert.deepEqual(rowOf(text, 'shell_exec'), [
    'shell_exec',
    'builtin',
    // What a command writes is judged by write_file's rules.
    `ask (shell_exec: each command is decided by its rules${reads}); some calls: deny shell_exec(rm *), deny write_file(.git/**), allow write_file(**), 1 more`,
  ]);
  // An ask rule cannot change what is asked anyway.
  assert.deepEqual(rowOf(text, 'bg_exec'), [
    'bg_exec',
    'builtin',
    `ask (bg_exec: each command is decided by its rules${reads}); some calls: deny write_file(.git/**), allow write_file(**)`,
  ]);

  // What the column says is what a call gets.
  const engine = rt.desk.engine;
  const judge = (tool: string, args: object) =>
    engine.judge({ tool, args: JSON.stringify(args), gated: tool !== 'read_file' && tool !== 'list_dir' });
  assert.equal((await judge('list_dir', { path: '.' })).decision, 'deny');
  assert.equal((await judge('write_file', { path: 'src/a.ts', content: '' })).decision, 'allow');
  assert.equal((await judge('write_file', { path: '.git/config', content: '' })).decision, 'deny');
  assert.equal((await judge('read_file', { path: 'notes.txt' })).decision, 'allow');
  assert.equal((await judge('read_file', { path: `${s.dirs.home}/.ssh/id_rsa` })).decision, 'ask');
  assert.equal((await judge('shell_exec', { command: 'git status' })).decision, 'allow');
  assert.equal((await judge('shell_exec', { command: 'make' })).decision, 'ask');
  // A command known to only read runs unasked where the sandbox confines it.
  assert.equal((await judge('shell_exec', { command: 'ls' })).decision, confined ? 'allow' : 'ask');
  assert.equal((await judge('bg_exec', { command: 'make > .git/x' })).decision, 'deny');
});

test('/tools on the screen: a deny rule added to config.lua turns the default into that rule at the next start', async () => {
  const dirs = makeDirs('clm-tools-pty-');
  const rowOnScreen = async (config: string) => {
    dirs.write('config.lua', `return { model = "m/x", providers = { m = { url = "${s.mock.base}" } }${config} }\n`);
    const screen = spawnPty(['-S', '-p', dirs.empty], { dirs, cols: 140, rows: 30 });
    try {
      await screen.waitFor('[online]', 'the connection');
      screen.type(`/tools${KEYS.enter}`);
      await screen.waitFor(/^\s+list_dir\s+builtin\s+\S/m, 'the list_dir row');
      return screen
        .screen()
        .find((l) => /^\s+list_dir\s+builtin/.test(l))!
        .trim()
        .split(/ {2,}/);
    } finally {
      await screen.dispose();
    }
  };
  assert.deepEqual(await rowOnScreen(''), ['list_dir', 'builtin', 'allow (default: the tool has no side effects)']);
  assert.deepEqual(await rowOnScreen(', permissions = { deny = { "list_dir" } }'), [
    'list_dir',
    'builtin',
    'deny (list_dir in config.lua:1)',
  ]);
});
