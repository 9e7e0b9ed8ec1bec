// createFetchHost outside a page (Node's own fetch): what does not need a browser to be shown —
// header precedence, the `base` for relative URLs, the signal, the messages where no page origin
// exists. The browser behaviour proper is in chromium.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createFetchHost, createAgent, openaiAdapter, type HttpResponse, type HostError } from '../../src/browser.js';
import { mockLlmPerFile } from '../fixtures/mock-llm-per-file.js';
import * as oa from '../fixtures/openai-replies.js';

const mock = await mockLlmPerFile();

function request(host: ReturnType<typeof createFetchHost>, url: string, body?: string, headers?: Record<string, string>) {
  return new Promise<{ res?: HttpResponse; err?: HostError; chunks: number }>((resolve) => {
    let chunks = 0;
    host.http(
      { url, body, headers },
      {
        onData: () => {
          chunks++;
        },
        onResponse: (res) => resolve({ res, chunks }),
        onError: (err) => resolve({ err, chunks }),
      },
    );
  });
}

test("headers: the agent's, then `headers`, then `requestHeaders` per request, later ones winning whatever the case", async () => {
  mock.push(oa.text('a'), oa.text('b'));
  let n = 0;
  const host = createFetchHost({
    headers: { 'X-Extra': 'yes', Authorization: 'Bearer page' },
    requestHeaders: (req) => ({ 'x-n': String(++n), 'x-url': req.url }),
  });
  for (let i = 0; i < 2; i++) {
    const r = await request(host, `${mock.base}/chat/completions`, '{}', {
      authorization: 'Bearer agent',
      'content-type': 'application/json',
    });
    assert.equal(r.res?.status, 200);
  }
  const [a, b] = mock.posts;
  assert.equal(a!.headers.authorization, 'Bearer page');
  assert.equal(a!.headers['x-extra'], 'yes');
  assert.equal(a!.headers['content-type'], 'application/json');
  assert.equal(a!.headers['x-url'], `${mock.base}/chat/completions`);
  assert.deepEqual([a!.headers['x-n'], b!.headers['x-n']], ['1', '2']);
});

test('a relative URL resolves against `base`; without a page or a base it is refused, not retried', async () => {
  mock.push(oa.text('relative ok'));
  const agent = createAgent(
    { baseUrl: '/v1/chat/completions' },
    createFetchHost({ base: `${mock.url}/somewhere/page.html` }),
    {},
    { dialects: [openaiAdapter] },
  );
  const r = await agent.run('q');
  assert.equal(r.status, 0, r.error);
  assert.equal(r.text, 'relative ok');
  assert.equal(mock.posts[0]!.path, '/v1/chat/completions');

  const notices: string[] = [];
  const lost = createAgent(
    { baseUrl: '/v1/chat/completions' },
    createFetchHost(),
    { onNotice: (t) => notices.push(t) },
    { retryBaseMs: 1, dialects: [openaiAdapter] },
  );
  const f = await lost.run('q');
  assert.equal(
    f.error,
    'http request failed: relative URL "/v1/chat/completions" needs a page to resolve against: give createFetchHost a base',
  );
  assert.deepEqual(notices, []);
});

test('byte bodies are sent as they are; a non-2xx body is a response, not streamed', async () => {
  mock.push(oa.text('bytes ok'), oa.httpError(418, 'teapot'));
  const host = createFetchHost();
  const bytes = new TextEncoder().encode('{"k":"ü"}');
  const r = await new Promise<HttpResponse>((resolve, reject) => {
    host.http({ url: `${mock.base}/chat/completions`, body: bytes }, { onResponse: resolve, onError: (e) => reject(new Error(e.message)) });
  });
  assert.equal(r.status, 200);
  assert.equal(mock.posts[0]!.body, '{"k":"ü"}');
  const e = await request(host, `${mock.base}/chat/completions`, '{}');
  assert.equal(e.res?.status, 418);
  assert.equal(e.chunks, 0);
  assert.match(new TextDecoder().decode(e.res!.body), /teapot/);
});

test("the host's signal cancels requests in flight and refuses later ones; cancel() reports once", async () => {
  mock.push({ hang: true });
  const ac = new AbortController();
  const host = createFetchHost({ signal: ac.signal });
  const pending = request(host, `${mock.base}/chat/completions`, '{}');
  while (mock.posts.length === 0) await new Promise((r) => setTimeout(r, 5));
  ac.abort();
  assert.deepEqual((await pending).err, { code: 'ECANCELED', message: 'cancelled' });
  assert.deepEqual((await request(host, `${mock.base}/chat/completions`, '{}')).err, { code: 'ECANCELED', message: 'cancelled' });

  mock.push({ hang: true });
  const errors: HostError[] = [];
  const h = createFetchHost().http(
    { url: `${mock.base}/chat/completions`, body: '{}' },
    { onResponse: () => assert.fail('no response'), onError: (e) => errors.push(e) },
  );
  h.cancel();
  h.cancel();
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(errors, [{ code: 'ECANCELED', message: 'cancelled' }]);
});

test('a failed fetch outside a page: one message naming both possible causes, not retried', async () => {
  const notices: string[] = [];
  const agent = createAgent(
    { baseUrl: 'http://127.0.0.1:1/v1/chat/completions' },
    createFetchHost(),
    { onNotice: (t) => notices.push(t) },
    { retryBaseMs: 1, dialects: [openaiAdapter] },
  );
  const r = await agent.run('q');
  assert.match(
    r.error!,
    /^http request failed: network error or CORS rejection from http:\/\/127\.0\.0\.1:1\/v1\/chat\/completions: .+ \(is the server up, and does it allow this origin\?\)$/,
  );
  assert.deepEqual(notices, []);
});
