// The interactive UI's slash commands over the real runtime and the loopback mock LLM: switching
// model, provider and dialect with the history intact (the URL built for each dialect), the agent
// profile with its plugins, /clear rotating the session, the listings with the server's live
// models, the display toggles, /compact, quitting, and every refusal with its message.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as A from '../fixtures/anthropic-replies.js';
import * as O from '../fixtures/openai-replies.js';
import * as R from '../fixtures/responses-replies.js';
import { waitFor } from '../fixtures/run-cli.js';
import { runtimeSuite } from '../fixtures/command-context.js';
import { ALL_COMMANDS, COMMANDS, runCommand } from '../../src/cli/ui/commands.js';

const s = runtimeSuite();

const OA_KEY = 'sk-oa-0123456789';
const ANT_KEY = 'sk-ant-0123456789';

/** Providers of three dialects on the mock, one without a url; agent profiles inline and in files. */
function config(extra = ''): void {
  s.dirs.write(
    'config.lua',
    `return {
  model = "oa/gpt",
  providers = {
    oa = { url = "${s.mock.base}", api_key = "${OA_KEY}", disable_parallel_tool_calls = 1, models = { gpt = { context_size = 8000 }, listed = { context_size = 16000 } } },
    anth = { kind = "anthropic", url = "${s.mock.base}", api_key = "${ANT_KEY}", models = { claude = { context_size = 50000, reasoning_effort = "high" }, ["claude-opus"] = {} } },
    resp = { kind = "openai-responses", url = "${s.mock.base}/" },
    nourl = { kind = "openai" },
  },
  agents = { coder = { model = "anth/claude", system_prompt = "You write code." } },
  ${extra}
}
`,
  );
  s.dirs.write('agents/reviewer.lua', 'return { system_prompt = "You review code." }\n');
  s.dirs.write('agents/coder/whisper.lua', 'clm.tool_register("whisper", { invoke = function(args, ctx) ctx:complete("...") end })\n');
}

const lastPost = () => s.mock.posts.at(-1)!;
const contents = (msgs: { content: unknown }[]) => msgs.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));

test("/model provider/id switches the dialect: the next request goes to /messages with the key, the model's settings and the history", async () => {
  config();
  const { rt, ctx, texts, printed, calls } = await s.start([]);
  assert.equal(rt.agent.provider, 'openai');
  s.mock.push(O.text('first answer'));
  assert.equal((await rt.agent.run('first question')).status, 0);
  assert.equal(lastPost().path, '/v1/chat/completions');

  assert.equal(await runCommand('/model anth/claude', ctx), true);
  assert.deepEqual(printed.at(-1), { text: '[switched to model: anth/claude]', kind: 'notice' });
  assert.equal(calls.probeConnection, 1, 'a switch re-probes the connection');
  assert.equal(rt.agent.provider, 'anthropic');
  assert.equal(rt.agent.model, 'claude');
  assert.equal(rt.agent.ctxMax, 50000, "the model's context_size came with it");
  assert.equal(rt.run.providerName, 'anth');

  s.mock.push(A.text('second answer'));
  assert.equal((await rt.agent.run('second question')).status, 0);
  const req = lastPost();
  assert.equal(req.path, '/v1/messages');
  assert.equal(req.headers['x-api-key'], ANT_KEY);
  assert.equal(req.headers.authorization, undefined);
  assert.equal(req.json.model, 'claude');
  assert.ok(req.json.thinking, "the model's reasoning_effort is asked for");
  assert.deepEqual(contents(req.json.messages), ['first question', 'first answer', 'second question']);
  for (const t of texts()) assert.ok(!t.includes(ANT_KEY) && !t.includes(OA_KEY), t);
});

test("/model back to an OpenAI provider and on to Responses: each dialect's own path, the history carried along", async () => {
  config();
  const { rt, ctx } = await s.start(['-m', 'anth/claude']);
  s.mock.push(A.text('a1'));
  await rt.agent.run('q1');
  assert.equal(lastPost().path, '/v1/messages');
  await runCommand('/model oa/gpt', ctx);
  s.mock.push(O.text('a2'));
  await rt.agent.run('q2');
  assert.equal(lastPost().path, '/v1/chat/completions');
  assert.equal(lastPost().headers.authorization, `Bearer ${OA_KEY}`);
  assert.equal(lastPost().json.parallel_tool_calls, false, "the provider's disable_parallel_tool_calls");
  await runCommand('/model resp/o4', ctx);
  s.mock.push(R.text('a3'));
  assert.equal((await rt.agent.run('q3')).status, 0);
  assert.equal(lastPost().path, '/v1/responses', 'a url with a trailing slash gets the path once');
  assert.deepEqual(R.lastInput(lastPost().json) !== undefined, true);
  const sent = JSON.stringify(lastPost().json.input);
  for (const t of ['q1', 'a1', 'q2', 'a2', 'q3']) assert.ok(sent.includes(t), `${t} in ${sent}`);
  assert.equal(lastPost().json.parallel_tool_calls, undefined, 'nothing of the previous provider follows');
});

test('/model with a bare id stays on the connection; one the provider lists under models gets its settings', async () => {
  config();
  const { rt, ctx, printed } = await s.start([]);
  await runCommand('/model literal-id', ctx);
  assert.deepEqual(printed.at(-1), { text: '[switched to model: literal-id (literal, not in config.lua)]', kind: 'notice' });
  assert.equal(rt.agent.model, 'literal-id');
  assert.notEqual(rt.agent.ctxMax, 8000, "the previous model's context size did not follow");
  s.mock.push(O.text('ok'));
  await rt.agent.run('hi');
  assert.equal(lastPost().path, '/v1/chat/completions');
  assert.equal(lastPost().json.model, 'literal-id');
  assert.equal(lastPost().headers.authorization, `Bearer ${OA_KEY}`, 'the key stays');
  assert.equal(lastPost().json.parallel_tool_calls, false, "the provider's settings stay");
  await runCommand('/model listed', ctx);
  assert.deepEqual(printed.at(-1), { text: '[switched to model: oa/listed]', kind: 'notice' });
  assert.equal(rt.agent.ctxMax, 16000);
});

test('/model on a -u endpoint without config.lua keeps that URL', async () => {
  const { rt, ctx, printed } = await s.start(['-u', `${s.mock.base}`]);
  await runCommand('/model other', ctx);
  assert.equal(printed.at(-1)!.text, '[switched to model: other (literal, not in config.lua)]');
  s.mock.push(O.text('ok'));
  await rt.agent.run('hi');
  assert.equal(lastPost().json.model, 'other');
  assert.equal(rt.agent.baseUrl, `${s.mock.base}/chat/completions`);
});

test('/provider switches the connection and keeps the model id (slashes and all)', async () => {
  config();
  const { rt, ctx, printed, calls } = await s.start(['-m', 'oa/qwen/qwen3-32b']);
  s.mock.push(O.text('a1'));
  await rt.agent.run('q1');
  await runCommand('/provider anth', ctx);
  assert.deepEqual(printed.at(-1), { text: '[switched to provider: anth]', kind: 'notice' });
  assert.equal(calls.probeConnection, 1);
  assert.equal(rt.agent.model, 'qwen/qwen3-32b');
  s.mock.push(A.text('a2'));
  await rt.agent.run('q2');
  assert.equal(lastPost().path, '/v1/messages');
  assert.equal(lastPost().json.model, 'qwen/qwen3-32b');
  assert.equal(lastPost().headers['x-api-key'], ANT_KEY);
  assert.deepEqual(contents(lastPost().json.messages), ['q1', 'a1', 'q2']);
});

test("/provider and /model list what is configured; /model adds the server's live list, or why there is none", async () => {
  config();
  s.mock.onGet('/v1/models', { body: { data: [{ id: 'live-1' }, { id: 'live-2' }] } });
  const { ctx, printed } = await s.start([]);
  await runCommand('/provider', ctx);
  assert.equal(
    printed.at(-1)!.text,
    ['available providers:', '  anth', '  nourl', '  oa (current)', '  resp', 'usage: /provider <name>'].join('\n'),
  );
  await runCommand('/model', ctx);
  assert.equal(
    printed.at(-1)!.text,
    ['available models:', '  anth/claude', '  anth/claude-opus', '  oa/gpt (current)', '  oa/listed', 'usage: /model <name>'].join('\n'),
  );
  await waitFor(() => printed.at(-1)!.text.startsWith('from server:'), 'the live list');
  assert.equal(printed.at(-1)!.text, 'from server:\n  live-1\n  live-2');

  s.mock.onGet('/v1/models', { status: 500, body: 'down' });
  await runCommand('/model', ctx);
  await waitFor(() => printed.at(-1)!.text.startsWith('(couldn'), 'the failure');
  assert.equal(printed.at(-1)!.text, "(couldn't query live models from the current provider: HTTP 500)");
});

test('without config.lua: no models, no providers, no agents — each says so', async () => {
  const { ctx, printed } = await s.start(['-u', s.mock.base]);
  await runCommand('/model', ctx);
  assert.equal(printed.at(-1)!.text, 'no models configured');
  await runCommand('/provider', ctx);
  assert.equal(printed.at(-1)!.text, 'no providers configured');
  await runCommand('/provider x', ctx);
  assert.deepEqual(printed.at(-1), { text: "provider 'x' not found", kind: 'error' });
  await runCommand('/agent x', ctx);
  assert.deepEqual(printed.at(-1), { text: 'no config loaded', kind: 'error' });
  await runCommand('/model p/x', ctx);
  assert.deepEqual(printed.at(-1), { text: "provider 'p' not found", kind: 'error' });
});

test('switch refusals: unknown provider, a bad spec, a provider without url, busy; nothing changes and nothing is probed', async () => {
  config();
  const { rt, ctx, printed, calls } = await s.start([]);
  const same = () => {
    assert.equal(rt.agent.model, 'gpt');
    assert.equal(rt.agent.provider, 'openai');
  };
  await runCommand('/model nope/x', ctx);
  assert.deepEqual(printed.at(-1), { text: "provider 'nope' not found", kind: 'error' });
  await runCommand('/model oa/', ctx);
  assert.deepEqual(printed.at(-1), { text: "model 'oa/' has no model id after '/'", kind: 'error' });
  await runCommand('/provider nope', ctx);
  assert.deepEqual(printed.at(-1), { text: "provider 'nope' not found", kind: 'error' });
  await runCommand('/provider nourl', ctx);
  assert.equal(printed.at(-1)!.kind, 'error');
  assert.match(printed.at(-1)!.text, /^failed to switch provider: provider 'nourl' has no url/);
  await runCommand('/model nourl/m', ctx);
  assert.match(printed.at(-1)!.text, /^failed to switch model: provider 'nourl' has no url/);
  same();
  s.mock.push({ hang: true });
  rt.agent.submit('a long one');
  for (const c of ['/model anth/claude', '/provider anth', '/agent coder', '/clear', '/compact']) {
    await runCommand(c, ctx);
    assert.deepEqual(printed.at(-1), { text: 'busy; try again when idle', kind: 'error' }, c);
  }
  rt.agent.cancel();
  same();
  assert.equal(calls.probeConnection, 0);
  assert.equal(calls.clearTranscript, 0);
});

test('CLM_API_KEY is the key of every connection a switch makes, as at start-up', async () => {
  config();
  const { rt, ctx, texts } = await s.start([], { env: { CLM_API_KEY: 'sk-env-0123456789' } });
  await runCommand('/model anth/claude', ctx);
  s.mock.push(A.text('ok'));
  await rt.agent.run('hi');
  assert.equal(lastPost().headers['x-api-key'], 'sk-env-0123456789');
  await runCommand('/provider oa', ctx);
  s.mock.push(O.text('ok'));
  await rt.agent.run('hi');
  assert.equal(lastPost().headers.authorization, 'Bearer sk-env-0123456789');
  for (const t of texts()) assert.ok(!t.includes('sk-env'), t);
});

test('/agent switches the profile (model, dialect, system prompt, agents/NAME/ plugins) and the conversation goes on', async () => {
  config();
  const { rt, ctx, printed, calls } = await s.start([]);
  s.mock.push(O.text('a1'));
  await rt.agent.run('q1');
  const session = rt.session!.id;
  assert.ok(!rt.agent.toolNames.includes('whisper'));
  assert.equal(await runCommand('/agent coder', ctx), true);
  assert.deepEqual(printed.at(-1), { text: '[switched to agent: coder]', kind: 'notice' });
  assert.equal(calls.probeConnection, 1);
  assert.equal(rt.run.agentName, 'coder');
  assert.equal(rt.agent.model, 'claude');
  assert.ok(rt.agent.toolNames.includes('whisper'), rt.agent.toolNames.join(' '));
  assert.equal(rt.session!.id, session, 'the session goes on');
  s.mock.push(A.text('a2'));
  assert.equal((await rt.agent.run('q2')).status, 0);
  const req = lastPost();
  assert.equal(req.path, '/v1/messages');
  assert.match(JSON.stringify(req.json.system), /You write code\./);
  assert.deepEqual(contents(req.json.messages), ['q1', 'a1', 'q2']);
  const logged = readFileSync(rt.session!.path, 'utf8');
  assert.equal(logged.match(/"q1"/g)?.length, 1, 'the carried messages are not logged twice');

  await runCommand('/a reviewer', ctx);
  assert.equal(printed.at(-1)!.text, '[switched to agent: reviewer]');
  assert.ok(!rt.agent.toolNames.includes('whisper'), "the other profile's plugins are gone");
});

test('/agent refusals: usage (with the profiles), unknown profile, a broken profile file', async () => {
  config();
  s.dirs.write('agents/broken.lua', 'return {{{\n');
  const { rt, ctx, printed } = await s.start([]);
  await runCommand('/agent', ctx);
  assert.deepEqual(printed.at(-1), { text: 'usage: /agent <name>\navailable agents:\n  broken\n  coder\n  reviewer', kind: 'error' });
  await runCommand('/agent ghost', ctx);
  assert.deepEqual(printed.at(-1), { text: "agent 'ghost' not found", kind: 'error' });
  const before = rt.agent;
  await runCommand('/agent broken', ctx);
  assert.equal(printed.at(-1)!.kind, 'error');
  assert.match(printed.at(-1)!.text, /^failed to create agent: agents\/broken\.lua:/);
  assert.equal(rt.agent, before, 'the agent stays');
  s.mock.push(O.text('still here'));
  assert.equal((await rt.agent.run('hi')).status, 0);
});

test('/clear forgets the conversation, clears the transcript and rotates the session; an empty one is deleted', async () => {
  config();
  const { rt, ctx, printed, calls } = await s.start([]);
  s.mock.push(O.text('a1'));
  await rt.agent.run('q1');
  const first = rt.session!;
  assert.equal(await runCommand('/clear', ctx), true);
  const second = rt.session!;
  assert.notEqual(second.id, first.id);
  assert.deepEqual(printed.at(-1), { text: `[new session ${second.id}]`, kind: 'notice' });
  assert.equal(calls.clearTranscript, 1);
  assert.equal(rt.agent.messages.length, 1, 'only the system prompt is left');
  assert.ok(existsSync(first.path), 'the session with a conversation is kept');
  await runCommand('/cls', ctx);
  assert.ok(!existsSync(second.path), 'the empty one is deleted');
  s.mock.push(O.text('a2'));
  await rt.agent.run('q2');
  assert.deepEqual(contents(lastPost().json.messages).slice(1), ['q2']);
});

test('/reasoning and /output toggle or set the display, with their notices', async () => {
  const { ctx, printed, calls } = await s.start(['-u', s.mock.base]);
  const run = async (c: string) => {
    await runCommand(c, ctx);
    return printed.at(-1)!.text;
  };
  assert.equal(await run('/reasoning'), '[reasoning shown]');
  assert.equal(ctx.settings.showReasoning, true);
  assert.equal(await run('/think'), '[reasoning hidden]');
  assert.equal(await run('/think on'), '[reasoning shown]');
  assert.equal(await run('/reasoning on'), '[reasoning shown]');
  assert.equal(await run('/reasoning off'), '[reasoning hidden]');
  assert.equal(ctx.settings.showReasoning, false);
  assert.equal(await run('/output'), '[output: full]');
  assert.equal(ctx.settings.expandOutput, true);
  assert.equal(await run('/output short'), '[output: short]');
  assert.equal(await run('/output full'), '[output: full]');
  assert.equal(calls.settingsChanged, 8);
  assert.equal(await run('/output loud'), 'usage: /output [full|short]');
  assert.equal(await run('/think maybe'), 'usage: /reasoning [on|off]');
  assert.equal(calls.settingsChanged, 8, 'a bad argument changes nothing');
});

test('/compact starts a compaction and says so', async () => {
  const { rt, ctx, printed } = await s.start(['-u', s.mock.base]);
  for (let i = 1; i <= 3; i++) {
    s.mock.push(O.text(`a${i}`));
    await rt.agent.run(`q${i}`);
  }
  s.mock.push(O.text('SUMMARY'));
  const done = new Promise<number>((res) => {
    const off = rt.subscribe((e) => {
      if (e.type === 'turn_done') {
        off();
        res(e.status);
      }
    });
  });
  await runCommand('/compact', ctx);
  assert.deepEqual(printed.at(-1), { text: '[compacting the conversation...]', kind: 'notice' });
  assert.equal(await done, 0);
  assert.ok(rt.agent.messages.some((m) => typeof m.content === 'string' && m.content.includes('SUMMARY')));
});

test('quitting, prompts, unknown commands', async () => {
  const { ctx, printed, calls } = await s.start(['-u', s.mock.base]);
  for (const c of ['/quit', '/exit', '/q', 'quit', '  exit  ']) assert.equal(await runCommand(c, ctx), true, c);
  assert.equal(calls.quit, 5);
  for (const p of ['hello', 'quit now', 'exit?', '']) assert.equal(await runCommand(p, ctx), false, p);
  assert.equal(await runCommand('/nope', ctx), true);
  assert.deepEqual(printed.at(-1), { text: 'unknown command (try /help)', kind: 'error' });
  assert.equal(await runCommand('/etc/passwd what is it', ctx), true);
  assert.equal(printed.at(-1)!.text, 'unknown command (try /help)');
  assert.equal(printed.length, 2);
});

test('/help lists every command with its aliases in 16 lines of at most 60 columns; /help keys the keys; /help NAME one', async () => {
  const { ctx, printed } = await s.start(['-u', s.mock.base]);
  for (const c of ['/help', '/h', '/?']) await runCommand(c, ctx);
  assert.equal(printed.length, 3);
  const help = printed[0]!.text;
  assert.equal(printed[1]!.text, help);
  for (const c of ALL_COMMANDS) {
    assert.ok(help.includes(`/${c.name}`), c.name);
    for (const a of c.aliases) assert.ok(help.includes(`/${a}`), a);
  }
  // With the status bar and the input box it fits a 20-row screen of 70 columns (the original's
  // suite checks its first and last commands there): the core commands' table, the aliases, and
  // the other commands by name on a `more:` line.
  const lines = help.split('\n');
  assert.ok(lines.length <= 16, `${lines.length} lines:\n${help}`);
  for (const l of lines) assert.ok(l.length <= 60, `too wide for 70 columns: ${l}`);
  assert.ok(help.includes('/help keys'), 'it says where the keys are');
  for (const c of ['/help keys', '/h keys']) await runCommand(c, ctx);
  const keys = printed[3]!.text;
  assert.equal(printed[4]!.text, keys);
  assert.ok(keys.split('\n').length <= 14, keys);
  for (const l of keys.split('\n')) assert.ok(l.length <= 72, `too wide for 80 columns: ${l}`);
  assert.deepEqual(
    COMMANDS.map((c) => c.name),
    ['help', 'clear', 'agent', 'model', 'provider', 'reasoning', 'output', 'compact', 'undo', 'rewind', 'diff', 'quit'],
  );
  for (const k of [
    'Enter',
    'Shift/Alt+Enter',
    'Esc',
    'Ctrl-C',
    'quit when idle with an empty input',
    '^O',
    '^R',
    '^L',
    'PgUp',
    'PgDn',
    'End',
    'TAB',
  ])
    assert.ok(keys.includes(k), k);
  await runCommand('/help me', ctx);
  assert.deepEqual(printed.at(-1), { text: 'usage: /help [keys|NAME]', kind: 'error' });
  await runCommand('/help /q', ctx);
  assert.deepEqual(printed.at(-1), { text: '/quit (also /exit, /q): leave clm (also bare quit or exit)', kind: 'info' });
  await runCommand('/help context', ctx);
  assert.match(printed.at(-1)!.text, /^\/context: /);
});
