// The real `clm` binary with config.lua / secrets.lua / agent profiles: resolution of -m, --provider, -u and -a, the error cases, an Anthropic provider with a
// key from clm.secrets, and `clm setup` run twice.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import * as an from '../fixtures/anthropic-replies.js';
import { runCli, show, REPO } from '../fixtures/run-cli.js';
import { cliSuite, sessionIdOf } from '../fixtures/cli-suite.js';
import { withoutSandboxNotice } from '../fixtures/bwrap.js';

const SECRET = 'sk-config-secret-7777';
const OTHER_SECRET = 'tvly-other-secret-5555';
// The connection comes from config.lua: no -u unless a test gives one.
const { mock, dirs, run } = await cliSuite({ dirs: 'each', script: () => oa.text('ok'), args: (_m, d) => ['-p', d.empty, '-S'] });

const systemPrompt = (i: number) => mock.posts[i]!.json.messages[0].content as string;

function writeConfig(body: string) {
  dirs.write('secrets.lua', `return { mock = "${SECRET}", tavily = "${OTHER_SECRET}" }\n`);
  chmodSync(join(dirs.clm, 'secrets.lua'), 0o600);
  dirs.write('config.lua', body);
}

const providers = () => `
  providers = {
    mock = { kind = "openai", url = "${mock.base}", api_key = clm.secrets.mock,
             models = { m1 = { context_size = 4096 } } },
    other = { kind = "openai", url = "${mock.url}/other/v1" },
  },`;

test('config.lua: a provider and model = "mock/m1" ⇒ model m1 at that URL with the configured key', async () => {
  writeConfig(`return {\n  model = "mock/m1",${providers()}\n}\n`);
  const r = await run(['-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts.length, 1);
  const req = mock.posts[0]!;
  assert.equal(req.path, '/v1/chat/completions');
  assert.equal(req.json.model, 'm1');
  assert.equal(req.headers.authorization, `Bearer ${SECRET}`);
  // CLM_API_KEY overrides the configured key.
  const r2 = await run(['-o', 'q'], { env: { CLM_API_KEY: 'sk-from-env-1234' } });
  assert.equal(r2.code, 0, show(r2));
  assert.equal(mock.posts[1]!.headers.authorization, 'Bearer sk-from-env-1234');
});

test('-m provider/model overrides the configured model; --provider the connection; -u the URL', async () => {
  writeConfig(`return {\n  model = "mock/m1",${providers()}\n}\n`);
  let r = await run(['-m', 'mock/m2', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts.at(-1)!.json.model, 'm2');
  assert.equal(mock.posts.at(-1)!.path, '/v1/chat/completions');
  // A model id may itself contain '/': split at the first one.
  r = await run(['-m', 'mock/Org/Big-Model', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts.at(-1)!.json.model, 'Org/Big-Model');
  r = await run(['--provider', 'other', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts.at(-1)!.path, '/other/v1/chat/completions');
  assert.equal(mock.posts.at(-1)!.json.model, 'm1');
  assert.equal(mock.posts.at(-1)!.headers.authorization, undefined, 'the other provider has no key');
  r = await run(['-u', `${mock.url}/alt/v1`, '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts.at(-1)!.path, '/alt/v1/chat/completions');
  assert.equal(mock.posts.at(-1)!.json.model, 'm1');
  assert.equal(mock.posts.at(-1)!.headers.authorization, `Bearer ${SECRET}`, '-u keeps the provider key');
});

test('agent profiles: inline agents.x and agents/x.lua change the system prompt (and model); config `agent` is the default', async () => {
  writeConfig(`return {
  model = "mock/m1",
  system_prompt = "You are the default.",
  agents = { pirate = { system_prompt = "You are a pirate.", model = "mock/m3" } },${providers()}
}
`);
  dirs.write('agents/poet.lua', 'return { system_prompt = "You write poems. secret known: " .. tostring(clm.secrets.mock ~= nil) }\n');
  let r = await run(['-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.match(systemPrompt(0), /^You are the default\.\n\ncurrent time: /);
  r = await run(['-a', 'pirate', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.match(systemPrompt(1), /^You are a pirate\.\n/);
  assert.equal(mock.posts[1]!.json.model, 'm3');
  r = await run(['--agent', 'poet', '-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.match(systemPrompt(2), /^You write poems\. secret known: true\n/);
  assert.equal(mock.posts[2]!.json.model, 'm1', 'a profile without model keeps the top-level one');
  // -m beats the profile's model.
  r = await run(['-a', 'pirate', '-m', 'mock/m9', '-o', 'q']);
  assert.equal(mock.posts[3]!.json.model, 'm9');
  // The config's own `agent` key selects a default profile.
  writeConfig(
    `return {\n  agent = "pirate",\n  model = "mock/m1",\n  agents = { pirate = { system_prompt = "Arr." } },${providers()}\n}\n`,
  );
  r = await run(['-o', 'q']);
  assert.equal(r.code, 0, show(r));
  assert.match(systemPrompt(4), /^Arr\.\n/);
});

test('without XDG_CONFIG_HOME / XDG_STATE_HOME: ~/.config/clm and ~/.local/state/clm', async () => {
  const cfg = join(dirs.home, '.config', 'clm');
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'config.lua'), `return {\n  model = "mock/from-home",${providers()}\n}\n`);
  const r = await run(['-o', 'q'], { env: { XDG_CONFIG_HOME: undefined, XDG_STATE_HOME: undefined } });
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts[0]!.json.model, 'from-home');
  const id = sessionIdOf(r);
  assert.ok(existsSync(join(dirs.home, '.local', 'state', 'clm', `${id}.jsonl`)));
});

test('an unknown provider in -m: exit 2 naming it; nothing sent', async () => {
  writeConfig(`return {${providers()}\n}\n`);
  const r = await run(['-m', 'nosuch/model-x', '-o', 'q']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /unknown provider 'nosuch'/);
  assert.match(r.stderr, /mock/, 'the configured providers are listed');
  const r2 = await run(['--provider', 'ghost', '-o', 'q']);
  assert.equal(r2.code, 2, show(r2));
  assert.match(r2.stderr, /ghost/);
  assert.equal(mock.posts.length, 0);
});

test('an unknown agent: exit 2 naming it (with and without a config.lua)', async () => {
  let r = await run(['-u', mock.base, '-a', 'ghost', '-o', 'q']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /agent 'ghost' not found/);
  writeConfig(`return {${providers()}\n}\n`);
  r = await run(['-u', mock.base, '-a', 'ghost', '-o', 'q']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /agent 'ghost' not found/);
  // A configured default agent that does not exist is an error too.
  writeConfig(`return { agent = "missing",${providers()}\n}\n`);
  r = await run(['-u', mock.base, '-o', 'q']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /missing/);
  assert.equal(mock.posts.length, 0);
});

test('config.lua with a syntax error: exit 2 naming the file and the line', async () => {
  writeConfig('return {\n  model = "mock/m1",\n  providers = {\n    a = { kind = "openai" url = "x" },\n  },\n}\n');
  const r = await run(['-u', mock.base, '-o', 'q']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /config\.lua:4:/);
  assert.match(r.stderr, /expected near 'url'/);
  assert.ok(r.stderr.includes(join(dirs.clm, 'config.lua')), 'the full path of the file is named');
  assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, 'one line, no stack trace');
  // A run-time error names the line too.
  writeConfig('local t = nil\nreturn { model = t.x }\n');
  const r2 = await run(['-u', mock.base, '-o', 'q']);
  assert.equal(r2.code, 2, show(r2));
  assert.match(r2.stderr, /config\.lua:2:.*nil/);
  assert.equal(mock.posts.length, 0);
});

test('config.lua not returning a table, or with a value of the wrong type: exit 2', async () => {
  writeConfig('local x = 1\n');
  let r = await run(['-u', mock.base, '-o', 'q']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /config\.lua: must return a table/);
  writeConfig('return "hello"\n');
  r = await run(['-u', mock.base, '-o', 'q']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /must return a table \(it returned string\)/);
  writeConfig('return { providers = { p = { kind = "openai", url = 42 } } }\n');
  r = await run(['-u', mock.base, '-o', 'q']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /providers\.p\.url must be a string/);
  writeConfig('return { providers = { p = { kind = "martian", url = "http://x" } } }\n');
  r = await run(['-u', mock.base, '-o', 'q']);
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /martian/);
  assert.equal(mock.posts.length, 0);
});

test('kind = "anthropic": /messages with x-api-key from clm.secrets; the key reaches neither the session nor the debug log', async () => {
  writeConfig(`return {
  model = "claude/claude-test",
  system_prompt = "Other token: " .. clm.secrets.tavily,
  providers = { claude = { kind = "anthropic", url = "${mock.base}", api_key = clm.secrets.mock } },
}
`);
  chmodSync(join(dirs.clm, 'secrets.lua'), 0o644);
  mock.script(() => an.text('hello from claude', { usage: { input: 9, output: 3 } }));
  const log = join(dirs.root, 'debug.log');
  const r = await run(['-o', `my question`], { env: { CLM_DEBUG_LOG: log } });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'hello from claude\n');
  const req = mock.posts[0]!;
  assert.equal(req.path, '/v1/messages');
  assert.equal(req.headers['x-api-key'], SECRET);
  assert.equal(req.headers.authorization, undefined);
  assert.ok(req.headers['anthropic-version']);
  assert.equal(req.json.model, 'claude-test');
  assert.match(JSON.stringify(req.json.system), /Other token: tvly-other-secret-5555/, 'the prompt itself is sent as configured');
  const id = sessionIdOf(r);
  const session = readFileSync(join(dirs.sessions, `${id}.jsonl`), 'utf8');
  assert.match(session, /"provider":"claude"/);
  assert.ok(!session.includes(SECRET) && !session.includes(OTHER_SECRET), session);
  const text = readFileSync(log, 'utf8');
  assert.match(text, /posting body/i);
  assert.match(text, /\/v1\/messages/);
  assert.ok(!text.includes(SECRET), 'the api key is not in the debug log');
  assert.ok(!text.includes(OTHER_SECRET), 'no clm.secrets value is in the debug log');
  assert.match(text, /secrets: .*secrets\.lua is readable by group\/other/);
});

test('clm setup twice: wrote, then kept; secrets.lua 0600; the generated config loads', async () => {
  const r1 = await runCli(['setup'], { dirs });
  assert.equal(r1.code, 0, show(r1));
  assert.deepEqual(r1.stdout.trim().split('\n'), [
    `plugins in ${join(dirs.clm, 'plugins')}`,
    `agent profiles in ${join(dirs.clm, 'agents')}`,
    `wrote ${join(dirs.clm, 'secrets.lua')}`,
    `wrote ${join(dirs.clm, 'config.lua')}`,
  ]);
  assert.equal(statSync(join(dirs.clm, 'secrets.lua')).mode & 0o777, 0o600);
  assert.equal(statSync(join(dirs.clm, 'config.lua')).mode & 0o077 & 0o022, 0, 'config.lua is not group/other writable');
  const seeds = readdirSync(join(REPO, 'plugins'))
    .filter((f) => f.endsWith('.lua'))
    .sort();
  assert.deepEqual(readdirSync(join(dirs.clm, 'plugins')).sort(), seeds);
  assert.ok(statSync(join(dirs.clm, 'agents')).isDirectory());
  const config = readFileSync(join(dirs.clm, 'config.lua'), 'utf8');
  for (const p of ['anthropic', 'openai', 'groq', 'cerebras', 'nvidia', 'openrouter', 'github', 'ollama_cloud', 'llm7', 'google'])
    assert.match(config, new RegExp(`\\b${p} = \\{`), p);

  // The user edits a file; the second run keeps everything.
  appendFileSync(join(dirs.clm, 'config.lua'), '-- my edit\n');
  const before = readFileSync(join(dirs.clm, 'config.lua'), 'utf8');
  const r2 = await runCli(['setup'], { dirs });
  assert.equal(r2.code, 0, show(r2));
  assert.match(r2.stdout, new RegExp(`^kept existing ${join(dirs.clm, 'secrets.lua')}$`, 'm'));
  assert.match(r2.stdout, new RegExp(`^kept existing ${join(dirs.clm, 'config.lua')}$`, 'm'));
  assert.doesNotMatch(r2.stdout, /^wrote /m);
  assert.equal(readFileSync(join(dirs.clm, 'config.lua'), 'utf8'), before);

  // The generated configuration loads; its plugin directory (the seeds) is used by default.
  mock.script(() => oa.streamText(['hello']));
  const r3 = await runCli(['-o', 'hi', '-u', mock.base], { dirs });
  assert.equal(r3.code, 0, show(r3));
  assert.equal(r3.stdout, 'hello\n', show(r3));
  assert.doesNotMatch(withoutSandboxNotice(r3.stderr), /notice|plugin/i, r3.stderr);
  const names = mock.posts[0]!.json.tools.map((t: any) => t.function.name);
  assert.ok(names.includes('reverse_string'), names.join(' '));
  // A provider from the template with -u: its (empty) key sends no Authorization header.
  const r4 = await runCli(['-o', 'hi', '-u', mock.base, '-m', 'groq/llama-3.3-70b-versatile', '-p', dirs.empty], { dirs });
  assert.equal(r4.code, 0, show(r4));
  assert.equal(mock.posts[1]!.json.model, 'llama-3.3-70b-versatile');
  assert.equal(mock.posts[1]!.headers.authorization, undefined);
});

test('setup takes no -o; a misplaced "setup" is a usage error', async () => {
  let r = await runCli(['setup', '-o', 'x'], { dirs });
  assert.equal(r.code, 2, show(r));
  r = await runCli(['-S', 'setup'], { dirs });
  assert.equal(r.code, 2, show(r));
  assert.match(r.stderr, /setup/);
  assert.ok(!existsSync(join(dirs.clm, 'config.lua')));
});
