// The endpoint as a browser page sees it: a relative baseUrl (a same-origin proxy), /models and
// /props derived from the endpoint's own path (a proxy prefix kept), host errors that say they
// are not worth retrying, and a default system prompt that does not presume a shell.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modelsUrl, propsUrl } from '../../src/core/providers/index.js';
import { createAgent, ClmError, EIO, DEFAULT_SYSTEM_PROMPT } from '../../src/index.js';
import type { Host, HttpHandlers, HttpRequest } from '../../src/index.js';
import { createNodeHost } from '../../src/node.js';

test('/models beside the endpoint, for absolute and relative endpoints', () => {
  assert.equal(modelsUrl('http://h/v1/chat/completions'), 'http://h/v1/models');
  assert.equal(modelsUrl('https://h/llm/v1/messages'), 'https://h/llm/v1/models');
  assert.equal(modelsUrl('http://h/v1/responses?api-version=1#x'), 'http://h/v1/models');
  assert.equal(modelsUrl('/v1/chat/completions'), '/v1/models');
  assert.equal(modelsUrl('/api/llm/v1/messages'), '/api/llm/v1/models');
  assert.equal(modelsUrl('/messages'), '/models');
  assert.equal(modelsUrl('./v1/chat/completions'), './v1/models');
  assert.equal(modelsUrl('http://h:8080'), 'http://h:8080');
});

test("/props at the root of the endpoint's own path: beside its v1 folder, a proxy prefix kept", () => {
  assert.equal(propsUrl('http://h:8080/v1/chat/completions'), 'http://h:8080/props');
  assert.equal(propsUrl('http://h:8080/chat/completions'), 'http://h:8080/props');
  assert.equal(propsUrl('https://example.com/llm/v1/chat/completions'), 'https://example.com/llm/props');
  assert.equal(propsUrl('https://example.com/llm/v1/messages?key=x'), 'https://example.com/llm/props');
  assert.equal(propsUrl('/v1/chat/completions'), '/props');
  assert.equal(propsUrl('/api/llm/v1/chat/completions'), '/api/llm/props');
  assert.equal(propsUrl('http://h:8080'), 'http://h:8080/props');
});

/** A host that answers from a table and records the URLs asked for. */
function tableHost(answers: Record<string, { status: number; body: string }>): Host & { urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    http(req: HttpRequest, h: HttpHandlers) {
      urls.push(req.url);
      const a = answers[req.url] ?? { status: 404, body: '' };
      queueMicrotask(() => h.onResponse({ status: a.status, headers: {}, body: new TextEncoder().encode(a.body) }));
      return { cancel() {} };
    },
    setTimer(ms, cb) {
      const t = setTimeout(cb, ms);
      return { cancel: () => clearTimeout(t) };
    },
  };
}

test('a relative baseUrl is accepted and used as given; checkConnection learns the context from the prefixed /props', async () => {
  const props = JSON.stringify({ build_info: 'b1', default_generation_settings: { n_ctx: 8192 } });
  const reply = JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] });
  const host = tableHost({
    '/llm/v1/models': { status: 200, body: '{"data":[{"id":"m"}]}' },
    '/llm/props': { status: 200, body: props },
    '/llm/v1/chat/completions': { status: 200, body: reply },
  });
  const agent = createAgent({ baseUrl: '/llm/v1/chat/completions' }, host);
  const c = await agent.checkConnection();
  assert.equal(c.status, 'online');
  assert.equal(c.ctxMax, 8192);
  assert.deepEqual(await agent.listModels(), ['m']);
  const r = await agent.run('hello');
  assert.equal(r.status, 0, r.error);
  assert.equal(r.text, 'hi');
  assert.deepEqual(host.urls, ['/llm/v1/models', '/llm/props', '/llm/v1/models', '/llm/v1/chat/completions']);
  for (const ok of ['./v1/chat/completions', '../v1/messages', '//proxy.example/v1/chat/completions', 'HTTPS://h/v1/chat/completions']) {
    createAgent({ baseUrl: ok }, host).close();
  }
});

test('a baseUrl that is neither an http(s) URL nor a path is refused, naming what it got', () => {
  const host = tableHost({});
  for (const bad of ['localhost:8080/v1/chat/completions', 'v1/chat/completions', 'ftp://h/v1', '', 'file:///etc/passwd']) {
    assert.throws(
      () => createAgent({ baseUrl: bad }, host),
      (e: unknown) => {
        assert.ok(e instanceof ClmError);
        assert.equal(e.code, 'EINVAL');
        assert.equal(e.message, `baseUrl must be an http(s) URL or a path starting with /, ./ or ../, got ${JSON.stringify(bad)}`);
        return true;
      },
    );
  }
});

test('a host error marked retryable: false ends the turn at once, without retry waits', async () => {
  let calls = 0;
  const host: Host = {
    http(_req, h) {
      calls++;
      queueMicrotask(() => h.onError({ code: 'ECORS', message: 'blocked by CORS', retryable: false }));
      return { cancel() {} };
    },
    setTimer(ms, cb) {
      const t = setTimeout(cb, ms);
      return { cancel: () => clearTimeout(t) };
    },
  };
  const notices: string[] = [];
  const agent = createAgent({ baseUrl: 'http://h/v1/chat/completions' }, host, { onNotice: (t) => notices.push(t) }, { retryBaseMs: 1 });
  const r = await agent.run('x');
  assert.equal(r.status, EIO);
  assert.equal(r.error, 'http request failed: blocked by CORS');
  assert.equal(calls, 1);
  assert.deepEqual(notices, []);
});

test('a relative baseUrl through the Node host fails at once: an invalid URL is not retried', async () => {
  const host = createNodeHost({ log: null });
  try {
    const notices: string[] = [];
    const agent = createAgent({ baseUrl: '/v1/chat/completions' }, host, { onNotice: (t) => notices.push(t) }, { retryBaseMs: 1 });
    const r = await agent.run('x');
    assert.equal(r.status, EIO);
    assert.match(r.error!, /^http request failed: .*Invalid URL/);
    assert.deepEqual(notices, []);
  } finally {
    host.close();
  }
});

test("the library's default system prompt invites the tools a program registers, and speaks of no shell", () => {
  assert.match(DEFAULT_SYSTEM_PROMPT, /^You are a helpful assistant\./);
  assert.match(DEFAULT_SYSTEM_PROMPT, /tools/);
  assert.doesNotMatch(DEFAULT_SYSTEM_PROMPT, /command|files|system\b/);
});
