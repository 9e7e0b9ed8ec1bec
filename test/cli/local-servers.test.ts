// Finding local servers and learning their limits, against fake servers of each kind on the
// suite's own loopback ports (their real API shapes: test/fixtures/local-servers.ts), and
// against none: closed ports, a server that never answers, one that is no LLM server.

import { after, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { createNodeHost } from '../../src/host/node.js';
import { findLocalServers, locateServer, noneText, placesFrom, usingText } from '../../src/cli/local-servers.js';
import type { Place } from '../../src/cli/local-server.js';
import { startMockLlm } from '../fixtures/mock-llm.js';
import { asLlamaCpp, asLmStudio, asOllama, asVllm } from '../fixtures/local-servers.js';

const [a, b, c, d] = await Promise.all([startMockLlm(), startMockLlm(), startMockLlm(), startMockLlm()]);
const lines: string[] = [];
const host = createNodeHost({ log: (l) => lines.push(l) });
after(async () => {
  host.close();
  await Promise.all([a, b, c, d].map((m) => m.close()));
});
beforeEach(() => {
  for (const m of [a, b, c, d]) m.reset();
  lines.length = 0;
});

const place = (kind: Place['kind'], m: { url: string }): Place => ({ kind, origin: m.url });

/** A loopback port with nothing listening. */
async function closedPort(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

test('each kind of server is found with its models, the loaded ones marked', async () => {
  asLlamaCpp(a, { models: ['qwen3-coder-30b'], nCtx: 32768 });
  asOllama(b, { models: ['qwen3:8b', 'llama3.2:3b'], running: { 'llama3.2:3b': 8192 } });
  asLmStudio(c, {
    models: [
      { id: 'qwen/qwen3-4b', maxContext: 32768 },
      { id: 'mistral-small', loadedContext: 4096, maxContext: 131072 },
    ],
  });
  asVllm(d, { model: 'Qwen/Qwen3-8B', maxModelLen: 16384 });
  // The places' kinds are wrong on purpose: the servers' own answers say what they are.
  const f = findLocalServers(host, [place('vLLM', a), place('llama.cpp', b), place('Ollama', c), place('LM Studio', d)]);
  const all = await f.all;
  assert.deepEqual(
    all.map((s) => [s.kind, s.origin, s.models.map((m) => `${m.id}${m.loaded ? '*' : ''}`)]),
    [
      ['llama.cpp', a.url, ['qwen3-coder-30b*']],
      ['Ollama', b.url, ['qwen3:8b', 'llama3.2:3b*']],
      ['LM Studio', c.url, ['qwen/qwen3-4b', 'mistral-small*']],
      ['vLLM', d.url, ['Qwen/Qwen3-8B*']],
    ],
  );
  assert.equal((await f.first)?.origin, a.url);
});

test('llama.cpp: n_ctx from /props over its slots, tools from chat_template_caps, and where each came from', async () => {
  asLlamaCpp(a, { models: ['qwen3'], nCtx: 65536, slots: 4, supportsTools: true });
  const l = await locateServer(host, [place('llama.cpp', a)], undefined);
  assert.deepEqual(l?.limits, {
    contextSize: 16384,
    contextFrom: '/props default_generation_settings.n_ctx 65536 over 4 slots',
    tools: true,
    toolsFrom: '/props chat_template_caps.supports_tools',
  });
  assert.equal(usingText(l!), `using llama.cpp at ${a.url.slice(7)}, model qwen3, context 16384 tokens`);
  assert.ok(
    lines.includes('[local] llama.cpp qwen3: context 16384 tokens, from /props default_generation_settings.n_ctx 65536 over 4 slots'),
    lines.join('\n'),
  );
  assert.ok(
    lines.includes('[local] llama.cpp qwen3: the template takes tools, from /props chat_template_caps.supports_tools'),
    lines.join('\n'),
  );
});

test('llama.cpp without /props: the training context from /v1/models meta, said to be the model’s', async () => {
  asLlamaCpp(a, { models: ['m'], nCtxTrain: 131072 });
  const l = await locateServer(host, [place('llama.cpp', a)], undefined);
  assert.equal(l?.limits.contextSize, 131072);
  assert.match(l!.limits.contextFrom!, /meta\.n_ctx_train/);
  assert.equal(l!.limits.tools, undefined);
});

test('llama.cpp router mode: the loaded model, and its /props?model=', async () => {
  asLlamaCpp(a, { models: ['small', 'big'], router: { loaded: ['big'], nCtxByModel: { small: 4096, big: 49152 } } });
  const l = await locateServer(host, [place('llama.cpp', a)], undefined);
  assert.equal(l?.model, 'big');
  assert.equal(l?.limits.contextSize, 49152);
  assert.ok(a.requests.some((r) => r.path === '/props?model=big'));
  // A model asked for by name gets its own figure.
  const small = await locateServer(host, [place('llama.cpp', a)], 'small');
  assert.equal(small?.limits.contextSize, 4096);
});

test('Ollama: the loaded context from /api/ps, else num_ctx, else the model’s context_length; tools from capabilities', async () => {
  asOllama(b, {
    models: ['qwen3:8b', 'plain:1b', 'bare:1b'],
    running: { 'qwen3:8b': 8192 },
    show: { 'qwen3:8b': { numCtx: 16384 }, 'plain:1b': { numCtx: 2048, tools: false }, 'bare:1b': { contextLength: 32768 } },
  });
  const loaded = await locateServer(host, [place('Ollama', b)], undefined);
  assert.equal(loaded?.model, 'qwen3:8b');
  assert.deepEqual(loaded?.limits, {
    contextSize: 8192,
    contextFrom: '/api/ps context_length (loaded)',
    tools: true,
    toolsFrom: '/api/show capabilities',
  });
  const show = b.posts.find((p) => p.path === '/api/show');
  assert.deepEqual(show?.json, { model: 'qwen3:8b' });
  const plain = await locateServer(host, [place('Ollama', b)], 'plain:1b');
  assert.deepEqual(
    [plain?.limits.contextSize, plain?.limits.contextFrom, plain?.limits.tools],
    [2048, '/api/show parameters num_ctx', false],
  );
  assert.match(usingText(plain!), /model plain:1b, context 2048 tokens; the server says the model's template does not take tools$/);
  const bare = await locateServer(host, [place('Ollama', b)], 'bare:1b');
  assert.deepEqual([bare?.limits.contextSize, bare?.limits.contextFrom], [32768, '/api/show model_info.qwen3.context_length']);
});

test('LM Studio: loaded_context_length of the loaded model, max_context_length of one not loaded', async () => {
  asLmStudio(c, {
    models: [
      { id: 'qwen/qwen3-4b', maxContext: 32768 },
      { id: 'mistral-small', loadedContext: 4096, maxContext: 131072, tools: true },
    ],
  });
  const l = await locateServer(host, [place('LM Studio', c)], undefined);
  assert.deepEqual(
    [l?.model, l?.limits.contextSize, l?.limits.contextFrom, l?.limits.tools],
    ['mistral-small', 4096, '/api/v0/models loaded_context_length', true],
  );
  const other = await locateServer(host, [place('LM Studio', c)], 'qwen/qwen3-4b');
  assert.deepEqual([other?.limits.contextSize, other?.limits.tools], [32768, undefined]);
});

test('vLLM: max_model_len from /v1/models', async () => {
  asVllm(d, { model: 'Qwen/Qwen3-8B', maxModelLen: 16384 });
  const l = await locateServer(host, [place('vLLM', d)], undefined);
  assert.deepEqual(l?.limits, { contextSize: 16384, contextFrom: '/v1/models max_model_len' });
});

test('the first place in the list that has a server wins, even when a later one answers first', async () => {
  asLlamaCpp(a, { models: ['slow'], nCtx: 4096 });
  a.onGet('/v1/models', { delayMs: 300, body: { object: 'list', data: [{ id: 'slow', object: 'model', owned_by: 'llamacpp' }] } });
  asVllm(d, { model: 'fast', maxModelLen: 8192 });
  const l = await locateServer(host, [place('llama.cpp', a), place('vLLM', d)], undefined);
  assert.equal(l?.model, 'slow');
});

test('no server: closed ports, a server that is no LLM server, one that never answers (bounded) give none', async () => {
  a.onGet('/v1/models', { hang: true });
  b.onGet('/v1/models', { body: '<html>router admin</html>' });
  const closed = await closedPort();
  const f = findLocalServers(host, [place('llama.cpp', a), place('Ollama', b), { kind: 'vLLM', origin: closed }], 200);
  assert.equal(await f.first, null);
  assert.deepEqual(await f.all, []);
  assert.ok(
    lines.some((l) => l.includes('no answer within')),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) => l.includes(`${closed.slice(7)}: `) && /ECONNREFUSED|refused/i.test(l)),
    lines.join('\n'),
  );
});

test('CLM_LOCAL_SERVERS: where to look, nowhere when empty, a bad entry named', () => {
  assert.deepEqual(placesFrom('ollama=127.0.0.1:5000, llamacpp=localhost:9'), [
    { kind: 'Ollama', origin: 'http://127.0.0.1:5000' },
    { kind: 'llama.cpp', origin: 'http://localhost:9' },
  ]);
  assert.deepEqual(placesFrom('vllm=http://10.0.0.2:8000/'), [{ kind: 'vLLM', origin: 'http://10.0.0.2:8000' }]);
  assert.deepEqual(placesFrom(''), []);
  assert.equal(placesFrom(undefined).length, 5);
  assert.throws(() => placesFrom('ollama'), /CLM_LOCAL_SERVERS: 'ollama' is not KIND=HOST:PORT/);
  assert.throws(() => placesFrom('tgi=1.2.3.4:80'), /'tgi=1.2.3.4:80'/);
  assert.equal(
    noneText(placesFrom(undefined)),
    'no local server answered at 127.0.0.1:8080, 127.0.0.1:8081 (llama.cpp), 127.0.0.1:11434 (Ollama), 127.0.0.1:1234 (LM Studio), 127.0.0.1:8000 (vLLM); start one, or point clm at yours with -u URL (or a provider in config.lua: clm setup writes one that lists the common providers)',
  );
});
