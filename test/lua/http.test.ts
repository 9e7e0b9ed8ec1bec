// http.get / http.post against a loopback server: any status is a response, bodies are
// binary-safe, headers pass through, the in-flight and per-call limits fail the request, and a
// cancelled call aborts its request.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { gzipSync } from 'node:zlib';
import { loadPlugins, type PluginHost } from '../../src/lua/index.js';
import type { MockLlm } from '../fixtures/mock-llm.js';
import { fixtures, ok, invoke, start, until, sleep, startLoopback } from './helpers.js';

let host: PluginHost;
let server: MockLlm;
let hits: { hanging: number; closed: number };

before(async () => {
  ({ server, hits } = await startLoopback());
  server.onGet('/missing', { status: 404, body: 'no such thing' });
  server.onGet('/teapot', { status: 418, body: '' });
  server.onGet('/slow', { body: 'slow', delayMs: 300 });
  server.onGet('/nul', {
    handle: (_req, res) => {
      res.writeHead(200);
      res.end(Buffer.from([0x61, 0x00, 0x62, 0xff, 0x00]));
    },
  });
  server.onGet('/big', {
    handle: (_req, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(5 * 1024 * 1024, 0x41));
    },
  });
  server.onGet('/gzip', {
    handle: (_req, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip' });
      res.end(gzipSync('hello world'));
    },
  });
  server.onGet('/redirect', {
    handle: (_req, res) => {
      res.writeHead(302, { location: '/hello' });
      res.end();
    },
  });
  server.script(() => ({ status: 201, body: 'created' }));
  host = await loadPlugins({ dirs: [join(fixtures, 'lua-http')] });
  assert.deepEqual(host.errors, []);
});
after(async () => {
  await host.close();
  await server.close();
});

const last = () => server.requests[server.requests.length - 1];

test('GET: status and body for any status', async () => {
  assert.equal(await ok(host, 'get', { url: `${server.url}/hello` }), 'status=200 len=2 body=hi');
  assert.equal(await ok(host, 'get', { url: `${server.url}/missing` }), 'status=404 len=13 body=no such thing');
  assert.equal(await ok(host, 'get', { url: `${server.url}/teapot` }), 'status=418 len=0 body=');
});

test('a compressed response arrives decoded', async () => {
  assert.equal(await ok(host, 'get', { url: `${server.url}/gzip` }), 'status=200 len=11 body=hello world');
});

test('bodies are binary-safe (NUL and non-UTF-8 bytes arrive intact)', async () => {
  const r = await invoke(host, 'get_raw_body', { url: `${server.url}/nul` });
  assert.ok(r.ok);
  assert.deepEqual([...(r.out as Uint8Array)], [0x61, 0x00, 0x62, 0xff, 0x00]);
});

test("GET headers: the plugin's headers are sent, the User-Agent names the tool, no content type", async () => {
  await ok(host, 'get', { url: `${server.url}/hello`, headers: { 'X-Test': 'yes', 'X-Num': 5 } });
  const h = last().headers;
  assert.equal(h['x-test'], 'yes');
  assert.equal(h['x-num'], '5');
  assert.equal(h['user-agent'], 'clm (get)');
  assert.equal(h['content-type'], undefined);
  await ok(host, 'get', { url: `${server.url}/hello`, headers: { 'User-Agent': 'mine' } });
  assert.equal(last().headers['user-agent'], 'mine');
});

test('POST: JSON content type by default, overridable; the body is sent byte for byte', async () => {
  assert.equal(await ok(host, 'post', { url: `${server.url}/things`, body: '{"a":1}' }), 'status=201 len=7 body=created');
  assert.equal(last().method, 'POST');
  assert.equal(last().headers['content-type'], 'application/json');
  assert.equal(last().body, '{"a":1}');
  await ok(host, 'post', { url: `${server.url}/things`, body: 'a\u0000b', headers: { 'content-type': 'text/plain' } });
  assert.equal(last().headers['content-type'], 'text/plain');
  assert.equal(last().body, 'a\u0000b');
});

test('redirects are followed', async () => {
  assert.equal(await ok(host, 'get', { url: `${server.url}/redirect` }), 'status=200 len=2 body=hi');
});

test('transport failures come back as nil, err', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  assert.match(await ok(host, 'get', { url: `http://127.0.0.1:${port}/` }), /^nil .*ECONNREFUSED/);
  assert.match(await ok(host, 'get', { url: 'not a url' }), /^nil /);
});

test('a response body over 4 MiB fails the request', async () => {
  assert.match(await ok(host, 'get', { url: `${server.url}/big` }), /^nil response body too large/);
});

test('at most 8 requests in flight per plugin: the 9th fails (nil, err)', async () => {
  assert.equal(
    await ok(host, 'burst', { n: 9, url: `${server.url}/slow` }),
    'ok=8 failed=1 http.get: too many requests in flight (at most 8 per plugin)',
  );
});

test('the in-flight limit is per plugin, across calls', async () => {
  const a = start(host, 'burst', { n: 5, url: `${server.url}/slow` });
  const b = start(host, 'burst', { n: 5, url: `${server.url}/slow` });
  const outs = [await a.result, await b.result].map((r) => (r.ok ? String(r.out) : r.error));
  const okCount = outs.reduce((n, o) => n + Number(/ok=(\d+)/.exec(o)![1]), 0);
  assert.equal(okCount, 8);
});

test('at most 128 requests per call: the 129th fails (nil, err); the next call starts afresh', async () => {
  assert.equal(
    await ok(host, 'sequential', { n: 129, url: `${server.url}/hello` }),
    'ok=128 http.get: request limit exceeded (at most 128 per tool call)',
  );
  assert.equal(await ok(host, 'sequential', { n: 1, url: `${server.url}/hello` }), 'ok=1 ');
});

test('bad arguments are Lua errors', async () => {
  assert.deepEqual((await ok(host, 'bad_args', { url: `${server.url}/hello` })).split('\n'), [
    'http_tools.lua:57: http.get: url must be a string, got no value',
    'http_tools.lua:58: http.get: headers must be a table',
    'http_tools.lua:59: http.get: headers must map strings to strings',
    'http_tools.lua:60: http.post: body must be a string, got no value',
  ]);
});

test('cancelling the call (abort, as the agent does on its timeout) aborts the request', async () => {
  const before = hits.closed;
  const from = hits.hanging;
  const r = start(host, 'slow_get', { url: `${server.url}/hang` });
  await until(() => hits.hanging > from, 30_000, 'the request');
  await sleep(50); // the tool's timeout_ms
  r.abort(new Error('timed out after 50 ms'));
  assert.deepEqual(await r.result, { ok: false, error: 'timed out after 50 ms (waiting in http.get)' });
  await until(() => hits.closed > before, 30_000, 'the request to be closed');
  // The plugin's in-flight slot is free again.
  assert.equal(await ok(host, 'burst', { n: 8, url: `${server.url}/hello` }), 'ok=8 failed=0 ');
});
