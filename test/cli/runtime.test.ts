// The program's runtime in-process: usable before plugins, MCP servers and the connection probe
// are ready (each reports as an event), rotating the session, switching to another profile with
// its own plugins and MCP servers, what a resumed session restored, and one exit hook for it all.

import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMockLlm, type MockLlm } from '../fixtures/mock-llm.js';
import * as oa from '../fixtures/openai-replies.js';
import { makeDirs, REPO, type CliDirs } from '../fixtures/run-cli.js';
import { parseCommandLine } from '../../src/cli/args.js';
import { createRuntime, type RunEvent, type Runtime } from '../../src/cli/runtime.js';
import { createSession } from '../../src/session/index.js';
import { withoutSandboxNotice } from '../fixtures/bwrap.js';

const TOOL_SERVER = join(REPO, 'test', 'fixtures', 'mcp', 'tool-server.mjs');
const SHOUT = 'clm.tool_register("shout", { invoke = function(args, ctx) ctx:complete("!") end })\n';
const WHISPER = 'clm.tool_register("whisper", { invoke = function(args, ctx) ctx:complete("...") end })\n';

let mock: MockLlm;
let dirs: CliDirs;
const open: Runtime[] = [];
before(async () => {
  mock = await startMockLlm();
});
after(async () => {
  for (const r of open) await r.close();
  await mock.close();
});
beforeEach(() => {
  mock.reset();
  dirs = makeDirs('clm-runtime-');
});

const envOf = () => ({
  ...process.env,
  XDG_CONFIG_HOME: dirs.config,
  XDG_STATE_HOME: dirs.state,
  HOME: dirs.home,
  CLM_DEBUG_LOG: '',
  CLM_API_KEY: '',
});

function plugins(name: string, files: Record<string, string>): string {
  const d = join(dirs.root, name);
  mkdirSync(d, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
  return d;
}

async function start(argv: string[], o: { resumeId?: string } = {}) {
  const events: RunEvent[] = [];
  const rt = await createRuntime({
    args: parseCommandLine(['-u', mock.base, '-S', ...argv]),
    onEvent: (e) => events.push(e),
    env: envOf(),
    resumeId: o.resumeId,
  });
  open.push(rt);
  return { rt, events, types: () => events.map((e) => e.type) };
}

/** Live child processes of this test running the fixture MCP server. */
function serverChildren(): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
      if (ppid === process.pid && state !== 'Z' && readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('tool-server.mjs'))
        out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

const until = async (what: string, ok: () => boolean) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(ok(), what);
};

test('the runtime is usable before plugins, MCP servers and the probe are ready; each reports as an event, then ready', async () => {
  mock.onGet('/v1/models', { body: { data: [{ id: 'm' }] }, delayMs: 200 });
  dirs.write(
    'config.lua',
    `return {
  mcp_servers = {
    { name = "slow", command = { ${JSON.stringify(process.execPath)}, ${JSON.stringify(TOOL_SERVER)}, "--start-delay=200" } },
    { name = "ghost", command = { "/nonexistent/clm-no-such-mcp-server" } },
  },
}
`,
  );
  const d = plugins('p', { 'shout.lua': SHOUT, 'broken.lua': 'this is not lua\n' });
  const { rt, events, types } = await start(['-p', d]);
  // Returned with the agent in place; nothing slow has answered yet.
  assert.ok(rt.agent.toolNames.includes('read_file'));
  assert.ok(!rt.agent.toolNames.includes('shout'));
  for (const t of ['plugins', 'mcp', 'ready', 'session'] as const)
    assert.ok(!types().includes(t), `${t} before start-up ended: ${types().join(' ')}`);
  // The probe waits for the first request, or for start-up to end.
  assert.deepEqual(
    events.filter((e) => e.type === 'connection'),
    [],
  );
  assert.equal(rt.session, null, 'the session file waits for the end of start-up');
  await rt.ready;
  const plug = events.find((e) => e.type === 'plugins');
  assert.ok(plug?.type === 'plugins' && plug.status === 'ready');
  assert.deepEqual(plug.tools, ['shout']);
  assert.equal(plug.errors.length, 1);
  assert.match(plug.errors[0]!, /^plugin broken: /);
  const mcp = events.find((e) => e.type === 'mcp');
  assert.ok(mcp?.type === 'mcp');
  assert.deepEqual(mcp.ready, ['slow']);
  assert.deepEqual(
    mcp.failed.map((f) => f.name),
    ['ghost'],
  );
  // The probe is not part of start-up (no request waits for it); it reports when it answers.
  await until('the probe reported', () => events.some((e) => e.type === 'connection' && e.status === 'online'));
  assert.ok(rt.agent.toolNames.includes('shout') && rt.agent.toolNames.includes('mcp__slow__echo'), rt.agent.toolNames.join(' '));
  assert.ok(
    events.some((e) => e.type === 'notice' && /mcp: ghost/.test(e.text)),
    'the failures are still told as notices',
  );
  const session = events.find((e) => e.type === 'session');
  assert.ok(session?.type === 'session' && session.id === rt.session!.id);
  // The probe and the sandbox check begin once start-up is over.
  // (Where bubblewrap is missing, the check's notice that the sandbox is not available is one of them.)
  const sandboxNotice = (e: RunEvent) => e.type === 'notice' && withoutSandboxNotice(e.text) === '';
  assert.equal(
    events
      .filter((e) => e.type !== 'connection' && e.type !== 'sandbox' && !sandboxNotice(e))
      .map((e) => e.type)
      .at(-1),
    'ready',
  );
  await until('the sandbox check reported', () => types().includes('sandbox'));
  assert.ok(types().indexOf('sandbox') > types().indexOf('ready'), types().join(' '));
});

test('rotateSession: a fresh session file; the old one kept when it holds a conversation, deleted when empty', async () => {
  const { rt, events } = await start(['-p', dirs.empty]);
  await rt.ready;
  const first = rt.session!;
  mock.push(oa.text('one'));
  assert.equal((await rt.agent.run('first prompt')).status, 0);
  const second = rt.rotateSession()!;
  assert.notEqual(second.id, first.id);
  assert.ok(existsSync(first.path), 'a session with a conversation is kept');
  assert.deepEqual(
    events.filter((e) => e.type === 'session').map((e) => (e as { id: string }).id),
    [first.id, second.id],
  );
  const third = rt.rotateSession()!;
  assert.ok(!existsSync(second.path), 'an empty session is deleted');
  mock.push(oa.text('two'));
  assert.equal((await rt.agent.run('after rotating')).status, 0);
  assert.match(readFileSync(third.path, 'utf8'), /after rotating/);
  assert.doesNotMatch(readFileSync(first.path, 'utf8'), /after rotating/);
  assert.equal(rt.session, third);
});

test('switchAgent: a new agent for the profile, its plugins and MCP servers; the old ones stopped; subscriptions go on', async () => {
  const mcpLine = `{ name = "srv", command = { ${JSON.stringify(process.execPath)}, ${JSON.stringify(TOOL_SERVER)} } }`;
  dirs.write(
    'config.lua',
    `return {
  model = "base-model",
  mcp_servers = { ${mcpLine} },
  agents = { coder = { model = "coder-model", system_prompt = "You write code." } },
}
`,
  );
  dirs.write('agents/coder/whisper.lua', WHISPER);
  const d = plugins('p', { 'shout.lua': SHOUT });
  const { rt, events } = await start(['-p', d]);
  await rt.ready;
  const old = rt.agent;
  assert.equal(old.model, 'base-model');
  assert.ok(old.toolNames.includes('shout') && !old.toolNames.includes('whisper'));
  assert.ok(old.toolNames.includes('mcp__srv__echo'));
  const before = events.length;
  await rt.switchAgent('coder');
  const now = rt.agent;
  assert.notEqual(now, old);
  assert.throws(() => old.submit('x'), /agent is closed/);
  assert.equal(now.model, 'coder-model');
  assert.equal(rt.run.agentName, 'coder');
  assert.ok(
    now.toolNames.includes('shout') && now.toolNames.includes('whisper') && now.toolNames.includes('mcp__srv__echo'),
    now.toolNames.join(' '),
  );
  assert.equal(events.slice(before).filter((e) => e.type === 'ready').length, 1);
  mock.push(oa.text('from the coder'));
  assert.equal((await now.run('hi')).status, 0);
  assert.match(mock.posts.at(-1)!.json.messages[0].content, /^You write code\./);
  assert.ok(
    events.slice(before).some((e) => e.type === 'text' && e.text === 'from the coder'),
    "the run's subscribers hear the new agent",
  );
});

test('switchAgent stops the old MCP server children', async () => {
  dirs.write(
    'config.lua',
    `return {
  mcp_servers = { { name = "srv", command = { ${JSON.stringify(process.execPath)}, ${JSON.stringify(TOOL_SERVER)} } } },
  agents = { other = { model = "m2" } },
}
`,
  );
  const earlier = new Set(serverChildren());
  const mine = () => serverChildren().filter((p) => !earlier.has(p));
  const { rt } = await start(['-p', dirs.empty]);
  await rt.ready;
  const [first, ...more] = mine();
  assert.ok(first && more.length === 0, `one server child: ${mine().join(' ')}`);
  await rt.switchAgent('other');
  await until('the old server exited', () => !mine().includes(first));
  const [second, ...others] = mine();
  assert.ok(second && second !== first && others.length === 0, `the new profile has its own server: ${mine().join(' ')}`);
  assert.ok(rt.agent.toolNames.includes('mcp__srv__echo'));
});

test('what a resumed session restored: the conversation compacted, and the whole transcript for replay', async () => {
  const s = createSession({ env: envOf() });
  const logged = [
    { role: 'user' as const, content: 'q1' },
    { role: 'assistant' as const, content: 'a1' },
    { role: 'user' as const, content: 'q2' },
    { role: 'assistant' as const, content: 'a2' },
    { role: 'user' as const, content: 'q3' },
    { role: 'assistant' as const, content: 'a3' },
  ];
  for (const m of logged) s.append(m);
  s.appendCompaction({ index: 0, count: 2, summary: 'SUMMARY of q1' });
  s.close();
  const { rt } = await start(['-p', dirs.empty], { resumeId: s.id });
  assert.ok(rt.resumed, 'known at once');
  assert.equal(rt.resumed.id, s.id);
  assert.deepEqual(
    rt.resumed.transcript.map((m) => m.content),
    ['q1', 'a1', 'q2', 'a2', 'q3', 'a3'],
  );
  assert.deepEqual(
    rt.resumed.messages.map((m) => m.content),
    ['SUMMARY of q1', 'q2', 'a2', 'q3', 'a3'],
  );
  assert.deepEqual(
    rt.agent.messages.slice(1).map((m) => m.content),
    ['SUMMARY of q1', 'q2', 'a2', 'q3', 'a3'],
  );
  await rt.ready;
  assert.equal(rt.session!.id, s.id, 'appends continue in the same file');
});

test('one process exit hook, however many runtimes, MCP servers and switches', async () => {
  dirs.write(
    'config.lua',
    `return {
  mcp_servers = { { name = "srv", command = { ${JSON.stringify(process.execPath)}, ${JSON.stringify(TOOL_SERVER)} } } },
  agents = { other = { model = "m2" } },
}
`,
  );
  const base = process.listenerCount('exit');
  const a = await start(['-p', dirs.empty]);
  const b = await start(['-p', dirs.empty]);
  await Promise.all([a.rt.ready, b.rt.ready]);
  await a.rt.switchAgent('other');
  // This file's earlier tests may have installed it already; then there is no new one at all.
  assert.ok(process.listenerCount('exit') - base <= 1, `${process.listenerCount('exit') - base} new exit listeners`);
});
