// Which dialects an agent speaks (src/core/providers/dialects.ts, AgentOptions.dialects): every one
// by default, only the given ones otherwise — a provider outside them is refused with a clear
// error, at creation, on setProvider and for another endpoint's models — and clm/browser's
// createAgent, which speaks only what the page names (and refuses to guess when it names none),
// running a turn against the mock LLM.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Agent,
  anthropicAdapter,
  ClmError,
  createAgent,
  DIALECTS,
  ollamaAdapter,
  openaiAdapter,
  responsesAdapter,
} from '../../../src/index.js';
import { createAgent as createBrowserAgent, DIALECTS as BROWSER_DIALECTS } from '../../../src/browser.js';
import { dialectFor } from '../../../src/core/providers/dialects.js';
import { createNodeHost } from '../../../src/host/node.js';
import { mockLlmPerFile } from '../../fixtures/mock-llm-per-file.js';
import * as an from '../../fixtures/anthropic-replies.js';
import type { ProviderKind } from '../../../src/core/types.js';

const mock = await mockLlmPerFile();

const host = { http: () => ({ cancel() {} }) };
const notAmong = (kind: string, given: string) => (e: unknown) =>
  e instanceof ClmError &&
  e.code === 'EINVAL' &&
  e.message === `provider '${kind}' is not among the agent's dialects (${given}): give its adapter in AgentOptions.dialects`;

test('every dialect by default: createAgent and new Agent speak all four kinds', () => {
  assert.deepEqual(
    DIALECTS.map((d) => d.kind),
    ['openai', 'ollama', 'anthropic', 'openai-responses'],
  );
  for (const kind of ['openai', 'ollama', 'anthropic', 'openai-responses'] as ProviderKind[]) {
    assert.equal(createAgent({ baseUrl: 'http://x/v1', provider: kind }, host).provider, kind);
    assert.equal(new Agent({ baseUrl: 'http://x/v1', provider: kind }, host).provider, kind);
  }
});

test('given dialects only: another provider is refused at creation and on setProvider, naming what to do', () => {
  assert.throws(
    () => createAgent({ baseUrl: 'http://x/v1/messages', provider: 'anthropic' }, host, {}, { dialects: [openaiAdapter] }),
    notAmong('anthropic', 'openai'),
  );
  const agent = createAgent(
    { baseUrl: 'http://x/v1/messages', provider: 'anthropic' },
    host,
    {},
    { dialects: [anthropicAdapter, responsesAdapter] },
  );
  assert.equal(agent.provider, 'anthropic');
  assert.throws(() => agent.setProvider({ baseUrl: 'http://x/v1/chat/completions' }), notAmong('openai', 'anthropic, openai-responses'));
  assert.equal(agent.provider, 'anthropic', 'a refused switch leaves the connection as it was');
  agent.setProvider({ baseUrl: 'http://x/v1/responses', provider: 'openai-responses' });
  assert.equal(agent.provider, 'openai-responses');
  assert.throws(
    () => createAgent({ baseUrl: 'http://x/v1' }, host, {}, { dialects: openaiAdapter as never }),
    (e: unknown) => e instanceof ClmError && e.code === 'EINVAL' && e.message === 'dialects must be an array of provider adapters',
  );
  // Unknown kinds are 'openai', as everywhere.
  assert.throws(() => dialectFor([], 'nonsense'), notAmong('openai', 'none'));
  assert.equal(dialectFor([ollamaAdapter, openaiAdapter], 'nonsense'), openaiAdapter);
});

test('given dialects only: the models of an endpoint in another dialect are refused', async () => {
  const agent = createAgent({ baseUrl: `${mock.url}/v1/chat/completions` }, createNodeHost(), {}, { dialects: [openaiAdapter] });
  await assert.rejects(agent.listModels({ baseUrl: `${mock.url}/v1/messages`, provider: 'anthropic' }), notAmong('anthropic', 'openai'));
  assert.equal(mock.requests.length, 0, 'nothing was sent');
  agent.close();
});

test('clm/browser: createAgent speaks the dialect the page names, end to end', async () => {
  mock.push(an.text('from the page agent'));
  const agent = createBrowserAgent(
    { baseUrl: `${mock.url}/v1/messages`, provider: 'anthropic', apiKey: 'k' },
    createNodeHost(),
    {},
    { dialects: [anthropicAdapter] },
  );
  const r = await agent.run('hi');
  assert.equal(r.status, 0, r.error);
  assert.equal(r.text, 'from the page agent');
  assert.equal(mock.posts[0]!.path, '/v1/messages');
  assert.equal(mock.posts[0]!.headers['x-api-key'], 'k');
  agent.close();
  assert.throws(
    () => createBrowserAgent({ baseUrl: 'http://x/v1' }, host, {}, { dialects: [anthropicAdapter] }),
    notAmong('openai', 'anthropic'),
  );
  assert.equal(BROWSER_DIALECTS, DIALECTS, 'clm/browser exports the same list of every dialect');
  for (const kind of ['openai', 'ollama', 'anthropic', 'openai-responses'] as ProviderKind[]) {
    assert.equal(createBrowserAgent({ baseUrl: 'http://x/v1', provider: kind }, host, {}, { dialects: BROWSER_DIALECTS }).provider, kind);
  }
});

test('clm/browser: a JavaScript caller that names no dialects is told to, whatever clm has set as the default', () => {
  const needs = (e: unknown) =>
    e instanceof ClmError &&
    e.code === 'EINVAL' &&
    e.message ===
      "clm/browser's createAgent needs opts.dialects, the wire dialects the page speaks: e.g. { dialects: [openaiAdapter] }, or DIALECTS for every one";
  // A page without a type checker: what it may pass instead of a list of adapters.
  const create = createBrowserAgent as (cfg: object, host: object, callbacks?: object, opts?: unknown) => unknown;
  for (const opts of [
    undefined,
    null,
    {},
    { dialects: undefined },
    { dialects: [] },
    { dialects: openaiAdapter },
    { dialects: 'openai' },
  ]) {
    assert.throws(() => create({ baseUrl: 'http://x/v1' }, host, {}, opts), needs, JSON.stringify(opts) ?? 'undefined');
  }
  assert.throws(() => create({ baseUrl: 'http://x/v1' }, host), needs, 'no fourth argument');
  assert.throws(
    () => create({ baseUrl: 'http://x/v1' }, host, {}, { dialects: [undefined] }),
    (e: unknown) => e instanceof ClmError && e.code === 'EINVAL' && e.message === 'dialects must be an array of provider adapters',
  );
});
