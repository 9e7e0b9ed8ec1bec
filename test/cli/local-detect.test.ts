// The real `clm` binary with no -u and no configured provider: it finds the local server (here
// fake ones on the suite's own ports, named by CLM_LOCAL_SERVERS), says which and with what
// model, sends its requests there with the model the server has loaded, and its compaction
// threshold uses the context size the server told. With -u it looks nowhere; with nothing
// found it says where it looked and how to point it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { runCli, show } from '../fixtures/run-cli.js';
import { cliSuite, writeSession } from '../fixtures/cli-suite.js';
import { createServer } from 'node:net';
import { startMockLlm } from '../fixtures/mock-llm.js';
import { asLlamaCpp, asOllama, placesEnv } from '../fixtures/local-servers.js';

const { mock, dirs, run } = await cliSuite({
  dirs: 'each',
  args: (_m, d) => ['-p', d.empty],
  setup: (d) => {
    mkdirSync(join(d.root, 'work'));
    writeFileSync(join(d.root, 'work', 'notes.txt'), 'n');
  },
});

const at = mock.url.replace('http://', '');

test('with no -u it finds Ollama, says so, and talks to it with the loaded model', async () => {
  asOllama(mock, {
    models: ['qwen3:8b', 'llama3.2:3b'],
    running: { 'llama3.2:3b': 8192 },
    show: { 'llama3.2:3b': { numCtx: 8192 } },
    chat: [oa.text('hello from ollama')],
  });
  const log = join(dirs.root, 'debug.log');
  const r = await run(['-o', 'hi'], { env: { CLM_LOCAL_SERVERS: placesEnv(['ollama', mock]), CLM_DEBUG_LOG: log } });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'hello from ollama\n');
  assert.match(r.stderr, new RegExp(`notice: using Ollama at ${at}, model llama3\\.2:3b, context 8192 tokens\\n`));
  const chat = mock.posts.filter((p) => p.path === '/v1/chat/completions');
  assert.equal(chat.length, 1, show(r));
  assert.equal(chat[0]!.json.model, 'llama3.2:3b');
  // Found and measured before the first request.
  const paths = mock.requests.map((q) => `${q.method} ${q.path}`);
  assert.ok(paths.indexOf('GET /v1/models') < paths.indexOf('POST /v1/chat/completions'), paths.join('\n'));
  assert.ok(paths.indexOf('POST /api/show') < paths.indexOf('POST /v1/chat/completions'), paths.join('\n'));
  const text = readFileSync(log, 'utf8');
  assert.match(text, /\[local\] Ollama at [^\n]*: qwen3:8b, llama3\.2:3b \(loaded\)/);
  assert.match(text, /\[local\] Ollama llama3\.2:3b: context 8192 tokens, from \/api\/ps context_length \(loaded\)/);
  assert.match(text, /\[local\] Ollama llama3\.2:3b: the template takes tools, from \/api\/show capabilities/);
});

test('-m names the model; the json result names it', async () => {
  asLlamaCpp(mock, { models: ['whatever-is-loaded'], nCtx: 16384 });
  mock.push(oa.text('ok'));
  const r = await run(['-m', 'my-model', '--output-format', 'json', '-o', 'hi'], {
    env: { CLM_LOCAL_SERVERS: placesEnv(['llamacpp', mock]) },
  });
  assert.equal(r.code, 0, show(r));
  assert.equal(JSON.parse(r.stdout).model, 'my-model');
  assert.equal(mock.posts[0]!.json.model, 'my-model');
});

test('the first place in the list with a server is used; the others are asked at the same time', async () => {
  const second = await startMockLlm();
  try {
    asLlamaCpp(second, { models: ['second'], nCtx: 4096 });
    asLlamaCpp(mock, { models: ['first'], nCtx: 4096 });
    mock.push(oa.text('from the first'));
    const r = await run(['-o', 'hi'], { env: { CLM_LOCAL_SERVERS: placesEnv(['llamacpp', mock], ['llamacpp', second]) } });
    assert.equal(r.code, 0, show(r));
    assert.equal(r.stdout, 'from the first\n');
    assert.ok(second.requests.some((q) => q.path === '/v1/models'));
    assert.equal(second.posts.length, 0);
  } finally {
    await second.close();
  }
});

test('with -u it looks for no local server', async () => {
  const local = await startMockLlm();
  try {
    asLlamaCpp(local, { models: ['m'], nCtx: 4096 });
    mock.push(oa.text('ok'));
    const r = await run(['-u', mock.base, '-o', 'hi'], { env: { CLM_LOCAL_SERVERS: placesEnv(['llamacpp', local]) } });
    assert.equal(r.code, 0, show(r));
    assert.deepEqual(local.requests, []);
    assert.doesNotMatch(r.stderr, /using|no local server/);
  } finally {
    await local.close();
  }
});

test('a configured provider is used as configured, with no look for a local server', async () => {
  const local = await startMockLlm();
  try {
    asLlamaCpp(local, { models: ['m'], nCtx: 4096 });
    mkdirSync(join(dirs.config, 'clm'), { recursive: true });
    writeFileSync(
      join(dirs.config, 'clm', 'config.lua'),
      `return { providers = { here = { url = "${mock.base}" } }, model = "here/cfg-model" }\n`,
    );
    mock.push(oa.text('ok'));
    const r = await run(['-o', 'hi'], { env: { CLM_LOCAL_SERVERS: placesEnv(['llamacpp', local]) } });
    assert.equal(r.code, 0, show(r));
    assert.deepEqual(local.requests, []);
    assert.equal(mock.posts[0]!.json.model, 'cfg-model');
  } finally {
    await local.close();
  }
});

test('nothing found: it says where it looked and how to point it', async () => {
  const r = await run(['-o', 'hi'], { env: { CLM_LOCAL_SERVERS: `vllm=${at}` } });
  assert.match(
    r.stderr,
    new RegExp(
      `notice: no local server answered at ${at} \\(vLLM\\); start one, or point clm at yours with -u URL \\(or a provider in config\\.lua: clm setup writes one that lists the common providers\\)`,
    ),
  );
  const bad = await run(['-o', 'hi'], { env: { CLM_LOCAL_SERVERS: 'ollama' } });
  assert.match(bad.stderr, /notice: CLM_LOCAL_SERVERS: 'ollama' is not KIND=HOST:PORT/);
});

test('the compaction threshold uses the context size the server told', async () => {
  const ID = '20250102-030405-c0ffee02';
  writeSession(dirs, ID, [
    { role: 'user', content: 'first earlier question' },
    { role: 'assistant', content: 'first earlier answer' },
    { role: 'user', content: 'second earlier question' },
    { role: 'assistant', content: 'second earlier answer' },
    { role: 'user', content: 'third earlier question' },
    { role: 'assistant', content: 'third earlier answer' },
  ]);
  asOllama(mock, {
    models: ['qwen3:8b'],
    running: { 'qwen3:8b': 4096 },
    chat: [
      oa.streamToolCall('list_dir', JSON.stringify({ path: join(dirs.root, 'work') }), 'c1', { usage: { prompt: 3500, completion: 20 } }),
      oa.text('SUMMARY: earlier questions.'),
      oa.text('done'),
    ],
  });
  const r = await run(['-r', ID, '-o', 'list the work directory'], { env: { CLM_LOCAL_SERVERS: placesEnv(['ollama', mock]) } });
  assert.equal(r.code, 0, show(r));
  const chat = mock.posts.filter((p) => p.path === '/v1/chat/completions');
  // 3520 of 4096 tokens is over the threshold: the chain is folded before it goes on.
  assert.equal(chat.length, 3, show(r));
  assert.match(String(oa.lastMessage(chat[1]!.json).content), /^Summarize the conversation so far/);
});

test('clm models lists the models of every server found, the loaded ones marked', async () => {
  const second = await startMockLlm();
  try {
    asOllama(mock, { models: ['qwen3:8b', 'llama3.2:3b'], running: { 'qwen3:8b': 8192 } });
    asLlamaCpp(second, { models: ['qwen3-coder'], nCtx: 4096 });
    const closed = `vllm=127.0.0.1:${await closedPortOf()}`;
    const r = await runCli(['models'], {
      dirs,
      env: { CLM_LOCAL_SERVERS: `${placesEnv(['llamacpp', second], ['ollama', mock])},${closed}` },
    });
    assert.equal(r.code, 0, show(r));
    assert.equal(
      r.stdout,
      `llama.cpp at ${second.url.slice(7)}\n  qwen3-coder  (loaded)\nOllama at ${at}\n  qwen3:8b  (loaded)\n  llama3.2:3b\n`,
    );
    assert.equal(mock.posts.length, 0, 'listing sends no chat request');
  } finally {
    await second.close();
  }
  const none = await runCli(['models'], { dirs, env: { CLM_LOCAL_SERVERS: `vllm=127.0.0.1:${await closedPortOf()}` } });
  assert.equal(none.code, 1);
  assert.match(none.stderr, /^clm: no local server answered at 127\.0\.0\.1:\d+ \(vLLM\); start one, or point clm at yours with -u URL/);
});

async function closedPortOf(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
