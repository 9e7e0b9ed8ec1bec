// checkConnection() and listModels() against Anthropic- and Responses-style endpoints: the models
// URL is derived from the endpoint (…/v1/messages → …/v1/models) and probed with the dialect's
// own auth headers (x-api-key + anthropic-version for Anthropic, never a bearer token).

import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { harness } from '../../fixtures/agent-harness.js';
import { startMockLlm, type MockLlm } from '../../fixtures/mock-llm.js';

let mock: MockLlm;
before(async () => {
  mock = await startMockLlm();
});
after(async () => {
  await mock.close();
});
beforeEach(() => {
  mock.requests.length = 0;
  mock.posts.length = 0;
});

const gets = () => mock.requests.filter((r) => r.method === 'GET');

test('anthropic: the probe GETs …/v1/models with x-api-key and anthropic-version, then lists models', async () => {
  // The Anthropic models list shape: {data:[{type,id,display_name,…}], has_more, first_id, last_id}.
  mock.onGet('/v1/models', {
    body: {
      data: [
        { type: 'model', id: 'claude-a', display_name: 'A' },
        { type: 'model', id: 'claude-b', display_name: 'B' },
      ],
      has_more: false,
      first_id: 'claude-a',
      last_id: 'claude-b',
    },
  });
  const r = harness(mock, { cfg: { provider: 'anthropic', baseUrl: `${mock.base}/messages`, apiKey: 'sk-ant-1' } });
  const res = await r.agent.checkConnection();
  assert.deepEqual(res, { status: 'online', detail: null, ctxMax: 0 });
  const probe = gets()[0]!;
  assert.equal(probe.path, '/v1/models');
  assert.equal(probe.headers['x-api-key'], 'sk-ant-1');
  assert.equal(probe.headers['anthropic-version'], '2023-06-01');
  assert.equal(probe.headers.authorization, undefined);
  // A 2xx with the context size unknown also asks llama.cpp's /props (absent here: ignored).
  assert.deepEqual(
    gets().map((g) => g.path),
    ['/v1/models', '/props'],
  );
  assert.deepEqual(await r.agent.listModels(), ['claude-a', 'claude-b']);
  assert.deepEqual(
    r.events.filter((e) => e.startsWith('conn:')),
    ['conn:checking:', 'conn:online:'],
  );
});

test('anthropic: 401 is online (the server answered), 5xx offline with the status', async () => {
  const r = harness(mock, { cfg: { provider: 'anthropic', baseUrl: `${mock.base}/messages`, apiKey: 'bad' } });
  mock.onGet('/v1/models', { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } });
  assert.equal((await r.agent.checkConnection()).status, 'online');
  assert.deepEqual(
    gets().map((g) => g.path),
    ['/v1/models'],
    'no /props after a non-2xx',
  );
  mock.onGet('/v1/models', { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
  assert.deepEqual(await r.agent.checkConnection(), { status: 'offline', detail: 'HTTP 529', ctxMax: 0 });
});

test('responses: the probe GETs …/v1/models with the bearer token', async () => {
  mock.onGet('/v1/models', { body: { object: 'list', data: [{ id: 'gpt-x', object: 'model' }] } });
  const r = harness(mock, {
    cfg: { provider: 'openai-responses', baseUrl: `${mock.base}/responses`, apiKey: 'sk-1', contextSize: 128000 },
  });
  assert.deepEqual(await r.agent.checkConnection(), { status: 'online', detail: null, ctxMax: 128000 });
  assert.deepEqual(
    gets().map((g) => [g.path, g.headers.authorization]),
    [['/v1/models', 'Bearer sk-1']],
    'no /props when the context size is configured',
  );
  assert.deepEqual(await r.agent.listModels(), ['gpt-x']);
});
