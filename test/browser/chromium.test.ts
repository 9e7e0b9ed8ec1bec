// The engine in headless Chromium: `clm/browser` bundled by esbuild, served with the mock LLM on
// one loopback origin, driven through puppeteer-core. Three dialects × streamed or not, a page
// tool behind a permission callback, cancel mid-stream, a tool timeout, a 503 retry, a module
// Worker, the CORS and refused-connection messages, the docs' example as written, and a page that
// names one dialect and bundles that one alone.
// scripts/test.mjs runs this file only where Chromium is installed (or CLM_REQUIRE_BROWSER is set).

import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { Page } from 'puppeteer-core';
import { startMockLlm, type MockLlm, type Reply } from '../fixtures/mock-llm.js';
import * as oa from '../fixtures/openai-replies.js';
import * as an from '../fixtures/anthropic-replies.js';
import * as rs from '../fixtures/responses-replies.js';
import { bundle, html, js, launchChromium, pageLog, serve, type Chromium, type StaticFile } from '../fixtures/chromium.js';
import { browserDocBlocks } from '../fixtures/docs-browser.js';
import type { Outcome, Spec } from '../fixtures/in-browser/scenario.js';
import type { OneDialectOutcome } from '../fixtures/in-browser/one-dialect-page.js';

const TITLE = 'clm browser test';
let mock: MockLlm;
/** Another origin, answering without any CORS header. */
let foreign: MockLlm;
let chromium: Chromium;
let page: Page;
let log: string[];
let files: Record<string, StaticFile>;
/** The modules with code in the one-dialect page's bundle. */
let oneDialectModules: string[];

before(async () => {
  const docs = browserDocBlocks();
  const docApp = docs.find((b) => b.lang === 'ts')!.code;
  const docHtml = docs.find((b) => b.lang === 'html')!.code;
  // Bundling and starting Chromium overlap: both take a while.
  const launched = launchChromium();
  const [app, worker, example, oneDialect] = await Promise.all([
    bundle("import './test/fixtures/in-browser/page.ts';"),
    bundle("import './test/fixtures/in-browser/worker.ts';"),
    bundle(docApp),
    bundle("import './test/fixtures/in-browser/one-dialect-page.ts';"),
  ]);
  oneDialectModules = oneDialect.used;
  [mock, foreign] = await Promise.all([startMockLlm(), startMockLlm()]);
  files = {
    '/index.html': html(`<!doctype html><title>${TITLE}</title><script type="module" src="/app.js"></script>`),
    '/app.js': js(app.js),
    '/worker.js': js(worker.js),
    '/example/index.html': html(docHtml),
    '/example/app.js': js(example.js),
    '/one-dialect/index.html': html(
      '<!doctype html><title>clm, one dialect</title><script type="module" src="/one-dialect/app.js"></script>',
    ),
    '/one-dialect/app.js': js(oneDialect.js),
  };
  serve(mock, files);
  chromium = await launched;
  page = await chromium.browser.newPage();
  log = pageLog(page);
  await page.goto(`${mock.url}/index.html`);
  await page.waitForFunction('globalThis.clmTest !== undefined');
});

after(async () => {
  await chromium?.close();
  await mock?.close();
  await foreign?.close();
});

beforeEach(() => {
  mock.reset();
  foreign.reset();
  serve(mock, files);
});

const run = (spec: Spec) => page.evaluate(`clmTest.run(${JSON.stringify(spec)})`) as Promise<Outcome>;
const runInWorker = (spec: Spec) => page.evaluate(`clmTest.runInWorker(${JSON.stringify(spec)})`) as Promise<Outcome>;
const show = (o: unknown) => `${JSON.stringify(o, null, 1)}\npage log:\n${log.join('\n')}`;

interface Dialect {
  provider: 'openai' | 'anthropic' | 'openai-responses';
  path: string;
  call(name: string, args: object, stream: boolean): Reply;
  text(parts: string[], stream: boolean): Reply;
}
const DIALECTS: Dialect[] = [
  {
    provider: 'openai',
    path: '/v1/chat/completions',
    call: (n, a, s) => (s ? oa.streamToolCall(n, JSON.stringify(a), 'call_1') : oa.toolCall(n, a, 'call_1')),
    text: (p, s) => (s ? oa.streamText(p) : oa.text(p.join(''))),
  },
  {
    provider: 'anthropic',
    path: '/v1/messages',
    call: (n, a, s) => (s ? an.streamToolCall(n, JSON.stringify(a), 'toolu_1') : an.toolCall(n, a, 'toolu_1')),
    text: (p, s) => (s ? an.streamText(p) : an.text(p.join(''))),
  },
  {
    provider: 'openai-responses',
    path: '/v1/responses',
    call: (n, a, s) => (s ? rs.streamToolCall(n, JSON.stringify(a), 'call_1') : rs.toolCall(n, a, 'call_1')),
    text: (p, s) => (s ? rs.streamText(p) : rs.text(p.join(''))),
  },
];

for (const d of DIALECTS) {
  for (const stream of [false, true]) {
    test(`${d.provider}, ${stream ? 'streamed' : 'not streamed'}: a tool round and a reply, relative baseUrl, extra and per-request headers`, async () => {
      mock.push(d.call('echo', { text: 'hi' }, stream), d.text(['all ', 'done'], stream));
      const o = await run({
        prompt: 'echo hi',
        provider: d.provider,
        baseUrl: d.path,
        stream,
        tools: ['echo'],
        apiKey: 'k-1',
        headers: { 'x-extra': 'yes' },
        perRequestHeader: true,
      });
      assert.equal(o.status, 0, show(o));
      assert.equal(o.text, 'all done');
      assert.deepEqual(o.events, ['tool_begin echo', 'tool_result echo ok: echo: hi', 'text']);
      assert.equal(mock.posts.length, 2);
      for (const [i, p] of mock.posts.entries()) {
        assert.equal(p.path, d.path);
        assert.equal(p.json.stream === true, stream, 'stream flag');
        assert.equal(p.headers['x-extra'], 'yes');
        assert.equal(p.headers['x-request-n'], String(i + 1));
        assert.equal(
          d.provider === 'anthropic' ? p.headers['x-api-key'] : p.headers.authorization,
          d.provider === 'anthropic' ? 'k-1' : 'Bearer k-1',
        );
      }
      assert.ok(mock.posts[1]!.body.includes('echo: hi'), 'the tool result went back to the model');
    });
  }
}

test('a page tool behind the permission callback reads the DOM; a denied call fails for the model', async () => {
  mock.push(oa.toolCall('page_title', {}), oa.text('titled'));
  const o = await run({ prompt: 'title?', tools: ['page_title'], permission: 'allow_once' });
  assert.equal(o.status, 0, show(o));
  assert.deepEqual(o.permissions, [{ name: 'page_title', args: '{}' }]);
  assert.deepEqual(o.events, ['tool_begin page_title', `tool_result page_title ok: ${TITLE}`, 'text']);
  assert.equal(oa.lastMessage(mock.posts[1]!.json).content, TITLE);

  mock.reset();
  serve(mock, files);
  mock.push(oa.toolCall('page_title', {}), oa.text('no title then'));
  const denied = await run({ prompt: 'title?', tools: ['page_title'], permission: 'deny_once' });
  assert.equal(denied.status, 0, show(denied));
  assert.deepEqual(denied.events, ['tool_begin page_title', 'tool_result page_title failed: [tool failed: denied by user]', 'text']);
  assert.equal(oa.lastMessage(mock.posts[1]!.json).content, '[tool failed: denied by user]');
});

test("cancel() mid-stream ends the turn with ECANCELED and aborts the fetch; so does the host's signal", async () => {
  let closed!: () => void;
  const serverSawClose = new Promise<void>((r) => {
    closed = r;
  });
  mock.push({
    handle: (_req, res) => {
      res.on('close', () => closed());
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Hel' } }] })}\n\n`);
    },
  });
  const o = await run({ prompt: 'talk', stream: true, cancelOnText: true });
  assert.equal(o.statusName, 'ECANCELED', show(o));
  assert.deepEqual(o.events, ['text']);
  await serverSawClose;

  mock.push({ hang: true });
  const aborted = await run({ prompt: 'wait', abortAfterMs: 50 });
  assert.equal(aborted.statusName, 'ECANCELED', show(aborted));
});

test('a tool past its deadline: its signal aborts, the model sees the timeout', async () => {
  mock.push(oa.toolCall('hang', {}), oa.text('moved on'));
  const o = await run({ prompt: 'hang', tools: ['hang'], hangTimeoutMs: 100 });
  assert.equal(o.status, 0, show(o));
  assert.equal(o.hangAbort, 'timed out after 100 ms');
  assert.deepEqual(o.events, ['tool_begin hang', 'tool_result hang timedout: [tool failed: timed out after 100 ms]', 'text']);
  assert.equal(oa.lastMessage(mock.posts[1]!.json).content, '[tool failed: timed out after 100 ms]');
});

test('a 503 is retried after Retry-After and the turn succeeds; a 401 says its status at once', async () => {
  mock.push(oa.httpError(503, 'loading model', { 'retry-after': '0' }), oa.text('recovered'));
  const o = await run({ prompt: 'q' });
  assert.equal(o.status, 0, show(o));
  assert.equal(o.text, 'recovered');
  assert.deepEqual(o.notices, ['HTTP 503; retrying in 0 ms']);
  assert.equal(mock.posts.length, 2);

  mock.push(oa.httpError(401, 'invalid api key'));
  const r = await run({ prompt: 'q' });
  assert.equal(r.statusName, 'EIO', show(r));
  assert.equal(r.error, 'HTTP 401: invalid api key');
  assert.equal(mock.posts.length, 3);
});

test('the engine in a module Worker: a streamed tool round, relative URLs against the worker script', async () => {
  mock.push(oa.streamToolCall('echo', '{"text":"from a worker"}'), oa.streamText(['worker ', 'reply']));
  const o = await runInWorker({ prompt: 'w', stream: true, tools: ['echo'] });
  assert.equal(o.status, 0, show(o));
  assert.equal(o.text, 'worker reply');
  assert.deepEqual(o.events, ['tool_begin echo', 'tool_result echo ok: echo: from a worker', 'text']);
  assert.equal(mock.posts.length, 2);
  assert.equal(mock.posts[0]!.path, '/v1/chat/completions');
});

test('checkConnection through a proxy prefix: /models and /props under it, the context size learned', async () => {
  mock.onGet('/llm/v1/models', { body: { data: [{ id: 'm' }] } });
  mock.onGet('/llm/props', { body: { build_info: 'b1', default_generation_settings: { n_ctx: 4096 } } });
  mock.push(oa.text('hi'));
  const o = await run({ prompt: 'q', baseUrl: '/llm/v1/chat/completions', checkConnection: true });
  assert.equal(o.status, 0, show(o));
  assert.deepEqual(o.connection, { status: 'online', detail: null, ctxMax: 4096 });
  assert.deepEqual(
    mock.requests.filter((r) => r.path.startsWith('/llm')).map((r) => `${r.method} ${r.path}`),
    ['GET /llm/v1/models', 'GET /llm/props', 'POST /llm/v1/chat/completions'],
  );
});

test('a cross-origin server without CORS: "blocked by CORS", naming both origins and the headers, not retried', async () => {
  const o = await run({ prompt: 'q', baseUrl: `${foreign.url}/v1/chat/completions`, apiKey: 'k', retryBaseMs: 1 });
  assert.equal(o.statusName, 'EIO', show(o));
  assert.equal(
    o.error,
    `http request failed: blocked by CORS: ${foreign.url} answered but does not allow requests from ${mock.url} ` +
      '(it must answer with Access-Control-Allow-Origin and allow the headers authorization, or be reached through a same-origin proxy)',
  );
  assert.deepEqual(o.notices, []);
  // One preflight (no retry), then the no-cors probe that told CORS from a dead server.
  assert.deepEqual(
    foreign.requests.map((r) => r.method),
    ['OPTIONS', 'HEAD'],
  );
});

test('a refused connection: "could not connect", not retried', async () => {
  const port = await closedPort();
  const o = await run({ prompt: 'q', baseUrl: `http://127.0.0.1:${port}/v1/chat/completions`, retryBaseMs: 1 });
  assert.equal(o.statusName, 'EIO', show(o));
  assert.match(
    o.error!,
    new RegExp(
      `^http request failed: could not connect to http://127\\.0\\.0\\.1:${port}: Failed to fetch \\(the server is down or refused the connection`,
    ),
  );
  assert.deepEqual(o.notices, []);
});

test("the docs' example, as written: a page tool after confirm(), the streamed reply in #out", async () => {
  mock.push(oa.streamToolCall('page_title', '{}'), oa.streamText(['The title is ', 'clm in a page.']));
  const p = await chromium.browser.newPage();
  const plog = pageLog(p);
  const dialogs: string[] = [];
  p.on('dialog', (dlg) => {
    dialogs.push(dlg.message());
    void dlg.accept();
  });
  try {
    await p.goto(`${mock.url}/example/index.html`);
    await p.waitForFunction("document.querySelector('#out').textContent.includes('clm in a page.')");
    assert.equal(await p.evaluate("document.querySelector('#out').textContent"), 'The title is clm in a page.', plog.join('\n'));
  } finally {
    await p.close();
  }
  assert.deepEqual(dialogs, ['Allow page_title?']);
  assert.equal(mock.posts[0]!.json.model, 'qwen3');
  assert.equal(oa.lastMessage(mock.posts[1]!.json).content, 'clm in a page');
});

test("a page bundling Anthropic's dialect alone runs a streamed tool turn, refuses another dialect and an agent without dialects", async () => {
  const adapters = oneDialectModules.filter((p) => /\/core\/providers\/(openai|anthropic|responses|index)\.js$/.test(p));
  assert.deepEqual(adapters, ['dist/core/providers/anthropic.js'], oneDialectModules.join('\n'));
  mock.push(an.streamToolCall('echo', '{"text":"one"}', 'toolu_1'), an.streamText(['one ', 'reply']));
  const p = await chromium.browser.newPage();
  const plog = pageLog(p);
  let o: OneDialectOutcome;
  try {
    await p.goto(`${mock.url}/one-dialect/index.html`);
    await p.waitForFunction('globalThis.clmOneDialect !== undefined');
    o = (await p.evaluate("clmOneDialect.run('echo one')")) as OneDialectOutcome;
  } finally {
    await p.close();
  }
  assert.equal(o.status, 0, `${JSON.stringify(o)}\n${plog.join('\n')}`);
  assert.equal(o.text, 'one reply');
  assert.deepEqual(o.events, ['tool_result echo ok: echo: one']);
  assert.deepEqual(
    mock.posts.map((r) => `${r.path} ${r.headers['x-api-key']}`),
    ['/v1/messages k-one', '/v1/messages k-one'],
  );
  assert.equal(
    o.refused,
    "EINVAL: provider 'openai' is not among the agent's dialects (anthropic): give its adapter in AgentOptions.dialects",
  );
  assert.equal(
    o.noDialects,
    "EINVAL: clm/browser's createAgent needs opts.dialects, the wire dialects the page speaks: e.g. { dialects: [openaiAdapter] }, or DIALECTS for every one",
  );
});

test('figure: a two-request tool turn in the browser (streamed, loopback mock)', async (t) => {
  mock.script((rec) => (oa.lastMessage(rec.json)?.role === 'tool' ? oa.streamText(['ok']) : oa.streamToolCall('echo', '{"text":"x"}')));
  const spec: Spec = { prompt: 'q', stream: true, tools: ['echo'] };
  await page.evaluate(`clmTest.repeat(${JSON.stringify(spec)}, 3)`);
  const ms = (await page.evaluate(`clmTest.repeat(${JSON.stringify(spec)}, 20)`)) as number[];
  assert.equal(ms.length, 20);
  assert.equal(mock.posts.length, 46);
  const sorted = [...ms].sort((a, b) => a - b);
  t.diagnostic(
    `browser tool turn (2 requests, streamed): median ${sorted[10]!.toFixed(1)} ms, min ${sorted[0]!.toFixed(1)} ms over 20 turns`,
  );
});

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
