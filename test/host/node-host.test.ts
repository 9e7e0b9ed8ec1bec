import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { createNodeHost, type NodeHost } from '../../src/host/node.js';
import { CLM_VERSION } from '../../src/host/version.js';
import type { HostError, HttpRequest, HttpResponse } from '../../src/core/host.js';
import { startMockLlm, type MockLlm } from '../fixtures/mock-llm.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  chunks: Buffer[];
  response?: HttpResponse;
  error?: HostError;
  /** onResponse + onError calls so far. */
  reports: number;
  order: string[];
}

/** Start a request and collect everything the host reports. */
function start(host: NodeHost, req: HttpRequest, opts: { stream?: boolean; onChunk?: () => void } = {}) {
  const o: Outcome = { chunks: [], reports: 0, order: [] };
  let done!: () => void;
  const settled = new Promise<Outcome>((r) => {
    done = () => r(o);
  });
  const handle = host.http(req, {
    onData:
      opts.stream === false
        ? undefined
        : (c) => {
            o.chunks.push(Buffer.from(c));
            o.order.push('data');
            opts.onChunk?.();
          },
    onResponse: (res) => {
      o.response = res;
      o.reports++;
      o.order.push('response');
      done();
    },
    onError: (err) => {
      o.error = err;
      o.reports++;
      o.order.push('error');
      done();
    },
  });
  return { handle, settled, o };
}

/** A plain node:http server with a per-test handler; counts connections. */
async function startServer(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(parts).toString('utf8')));
  });
  server.on('connection', (s) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

let mock: MockLlm;
let host: NodeHost;
before(async () => {
  mock = await startMockLlm();
  host = createNodeHost({ log: null });
});
after(async () => {
  host.close();
  await mock.close();
});

test('POST: full body, lower-cased headers, default Content-Type and User-Agent', async () => {
  mock.push({ status: 200, headers: { 'X-Custom': 'Yes' }, body: { ok: true } });
  const { settled } = start(host, { url: `${mock.base}/chat/completions`, body: '{"q":1}' }, { stream: false });
  const o = await settled;
  assert.equal(o.response!.status, 200);
  assert.equal(Buffer.from(o.response!.body).toString(), '{"ok":true}');
  assert.equal(o.response!.headers['x-custom'], 'Yes');
  assert.equal(o.response!.headers['content-type'], 'application/json');
  const rec = mock.posts.at(-1)!;
  assert.equal(rec.method, 'POST');
  assert.equal(rec.body, '{"q":1}');
  assert.equal(rec.headers['content-type'], 'application/json');
  assert.equal(rec.headers['user-agent'], `clm/${CLM_VERSION}`);
  assert.equal(rec.headers['content-length'], '7');
});

test('POST of body pieces: sent one after another as one body, Content-Length their sum, also after a redirect', async () => {
  assert.equal(host.bodyPieces, true);
  const enc = new TextEncoder();
  const big = 'é'.repeat(300_000); // 600 KB: more than one socket write
  const pieces = [enc.encode('{"a":"'), enc.encode(big), new Uint8Array(0), enc.encode('"}')];
  mock.push({ status: 200, body: { ok: true } });
  const o = await start(host, { url: `${mock.base}/chat/completions`, bodyPieces: pieces }, { stream: false }).settled;
  assert.equal(o.response!.status, 200);
  const rec = mock.posts.at(-1)!;
  assert.equal(rec.method, 'POST');
  assert.equal(rec.body, `{"a":"${big}"}`);
  assert.equal(rec.headers['content-length'], String(Buffer.byteLength(`{"a":"${big}"}`)));
  const srv = await startServer((req, res, body) => {
    if (req.url === '/moved') {
      res.writeHead(307, { location: '/here' });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, body }));
  });
  try {
    const r = await start(host, { url: `${srv.url}/moved`, bodyPieces: [enc.encode('{"x":'), enc.encode('1}')] }).settled;
    assert.deepEqual(JSON.parse(Buffer.from(r.response!.body).toString()), { method: 'POST', body: '{"x":1}' });
  } finally {
    await srv.close();
  }
});

test('headers: caller overrides defaults case-insensitively; client suffix tags the User-Agent; GET has no body type', async () => {
  mock.push({ body: 'x' });
  await start(host, {
    url: `${mock.url}/p`,
    body: 'a=1',
    headers: { 'content-type': 'text/plain', Authorization: 'Bearer k' },
    clientSuffix: 'weather',
  }).settled;
  const rec = mock.posts.at(-1)!;
  assert.equal(rec.headers['content-type'], 'text/plain');
  assert.equal(rec.headers['authorization'], 'Bearer k');
  assert.equal(rec.headers['user-agent'], `clm/${CLM_VERSION} (tool: weather)`);
  mock.onGet('/models', { body: { data: [] } });
  const o = await start(host, { url: `${mock.base}/models` }).settled;
  assert.equal(o.response!.status, 200);
  const get = mock.requests.at(-1)!;
  assert.equal(get.method, 'GET');
  assert.equal(get.headers['content-type'], undefined);
});

test('2xx: chunks stream in order before the response, which still carries the whole body', async () => {
  mock.push({ sse: ['data: a\n\n', 'data: b\n\n', 'data: c\n\n'], chunkDelayMs: 30 });
  const o = await start(host, { url: `${mock.base}/chat/completions`, body: '{}' }).settled;
  assert.equal(o.response!.status, 200);
  assert.ok(o.chunks.length >= 2, `${o.chunks.length} chunks`);
  assert.equal(Buffer.concat(o.chunks).toString(), 'data: a\n\ndata: b\n\ndata: c\n\n');
  assert.equal(Buffer.from(o.response!.body).toString(), 'data: a\n\ndata: b\n\ndata: c\n\n');
  assert.equal(o.order.at(-1), 'response');
  assert.equal(o.reports, 1);
});

test('any status is a response with the full body; no chunks for non-2xx', async () => {
  for (const status of [400, 404, 429, 500, 503]) {
    mock.push({ status, body: { error: { message: `status ${status}` } } });
    const o = await start(host, { url: `${mock.base}/chat/completions`, body: '{}' }).settled;
    assert.equal(o.response!.status, status);
    assert.equal(JSON.parse(Buffer.from(o.response!.body).toString()).error.message, `status ${status}`);
    assert.equal(o.chunks.length, 0);
    assert.equal(o.reports, 1);
  }
  // A streamed error body is not streamed either.
  mock.push({ status: 500, sse: ['data: nope\n\n'] });
  const o = await start(host, { url: `${mock.base}/x`, body: '{}' }).settled;
  assert.equal(o.chunks.length, 0);
  assert.equal(Buffer.from(o.response!.body).toString(), 'data: nope\n\n');
});

test('transport errors: refused port, socket destroyed before and during the response', async () => {
  // A port that was just free: nobody listens.
  const probe = createNetServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  let o = await start(host, { url: `http://127.0.0.1:${port}/v1`, body: '{}' }).settled;
  assert.equal(o.error!.code, 'ECONNREFUSED');
  assert.equal(o.response, undefined);

  // A fresh host: on a reused connection one reset is retried (see the keep-alive test).
  const h = createNodeHost({ log: null });
  mock.push({ destroy: true });
  o = await start(h, { url: `${mock.base}/x`, body: '{}' }).settled;
  h.close();
  assert.equal(o.error?.code, 'ECONNRESET');
  assert.equal(o.reports, 1);

  mock.push({
    handle: (_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 30);
    },
  });
  o = await start(host, { url: `${mock.base}/x`, body: '{}' }).settled;
  assert.ok(o.error, 'cut body is an error');
  assert.equal(o.response, undefined);
  await sleep(50);
  assert.equal(o.reports, 1);
});

test('cancel before the response reports ECANCELED once, synchronously; later cancels are no-ops', async () => {
  mock.push({ hang: true });
  const { handle, o } = start(host, { url: `${mock.base}/x`, body: '{}' });
  await sleep(50);
  handle.cancel();
  assert.deepEqual(o.error, { code: 'ECANCELED', message: 'cancelled' });
  assert.equal(o.reports, 1);
  handle.cancel();
  await sleep(50);
  assert.equal(o.reports, 1);
});

test('cancel right after starting (before any I/O) and after the response', async () => {
  const a = start(host, { url: `${mock.base}/x`, body: '{}' });
  a.handle.cancel();
  assert.equal(a.o.error!.code, 'ECANCELED');
  await sleep(50);
  assert.equal(a.o.reports, 1);

  mock.push({ body: 'done' });
  const b = start(host, { url: `${mock.base}/x`, body: '{}' });
  await b.settled;
  b.handle.cancel();
  await sleep(20);
  assert.equal(b.o.reports, 1);
  assert.equal(b.o.error, undefined);
});

test('cancel from inside onData stops the stream: one ECANCELED, no response, no more chunks', async () => {
  mock.push({ sse: ['one\n', 'two\n', 'three\n'], chunkDelayMs: 30 });
  let handle: { cancel(): void } | undefined;
  const s = start(host, { url: `${mock.base}/x`, body: '{}' }, { onChunk: () => handle!.cancel() });
  handle = s.handle;
  const o = await s.settled;
  await sleep(150);
  assert.equal(o.chunks.length, 1);
  assert.equal(o.error!.code, 'ECANCELED');
  assert.equal(o.response, undefined);
  assert.equal(o.reports, 1);
});

test('bad URL: reported once (after http() returns), and cancel in between wins', async () => {
  const a = start(host, { url: 'not a url', body: '{}' });
  assert.equal(a.o.reports, 0, 'not inside http()');
  const o = await a.settled;
  assert.equal(o.error!.code, 'ERR_INVALID_URL');
  const b = start(host, { url: 'ftp://example.com/x' });
  assert.equal((await b.settled).error!.code, 'EINVAL');
  const c = start(host, { url: 'not a url', body: '{}' });
  c.handle.cancel();
  await sleep(20);
  assert.equal(c.o.reports, 1);
  assert.equal(c.o.error!.code, 'ECANCELED');
});

test('keep-alive: sequential requests share one connection', async () => {
  const srv = await startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  const h = createNodeHost({ log: null });
  try {
    for (let i = 0; i < 4; i++) {
      const o = await start(h, { url: `${srv.url}/v1/chat/completions`, body: '{}' }).settled;
      assert.equal(o.response!.status, 200);
    }
    const o = await start(h, { url: `${srv.url}/v1/models` }).settled;
    assert.equal(o.response!.status, 200);
    assert.equal(srv.connections, 1);
  } finally {
    h.close();
    await srv.close();
  }
});

test('keep-alive: a reused connection the server dropped is retried once on a fresh one', async () => {
  const served = new WeakMap<Socket, number>();
  const srv = await startServer((req, res) => {
    const n = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, n);
    if (n > 1) {
      req.socket.destroy();
      return;
    } // a server that silently closed its idle side
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`ok ${n}`);
  });
  const h = createNodeHost({ log: null });
  try {
    const first = await start(h, { url: srv.url, body: '{}' }).settled;
    assert.equal(first.response!.status, 200);
    const second = await start(h, { url: srv.url, body: '{}' }).settled;
    assert.equal(second.response?.status, 200, JSON.stringify(second.error));
    assert.equal(srv.connections, 2);
  } finally {
    h.close();
    await srv.close();
  }
});

test('redirects: POST and body survive 301/302/303/307; at most 5 hops; credentials stay on the origin', async () => {
  const other = await startServer((req, res, body) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, body, auth: req.headers['authorization'] ?? null }));
  });
  const hops: string[] = [];
  const srv = await startServer((req, res, body) => {
    const u = new URL(req.url!, 'http://x');
    hops.push(u.pathname);
    const m = /^\/r(\d+)\/(\d+)$/.exec(u.pathname);
    if (m) {
      const code = Number(m[1]);
      const left = Number(m[2]);
      res.writeHead(code, { location: left > 0 ? `/r${code}/${left - 1}` : '/final' });
      res.end('moved');
      return;
    }
    if (u.pathname === '/away') {
      res.writeHead(302, { location: `${other.url}/landed` });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, body, auth: req.headers['authorization'] ?? null }));
  });
  try {
    for (const code of [301, 302, 303, 307, 308]) {
      const o = await start(host, { url: `${srv.url}/r${code}/1`, body: '{"x":1}', headers: { Authorization: 'Bearer same-origin' } })
        .settled;
      assert.equal(o.response!.status, 200, `code ${code}`);
      assert.deepEqual(JSON.parse(Buffer.from(o.response!.body).toString()), {
        method: 'POST',
        body: '{"x":1}',
        auth: 'Bearer same-origin',
      });
      assert.equal(o.chunks.join(''), Buffer.from(o.response!.body).toString(), 'only the final body streams');
    }
    hops.length = 0;
    let o = await start(host, { url: `${srv.url}/r302/4`, body: '{}' }).settled; // 5 redirects: fine
    assert.equal(o.response!.status, 200);
    assert.equal(hops.length, 6);
    o = await start(host, { url: `${srv.url}/r302/5`, body: '{}' }).settled; // 6 redirects: too many
    assert.equal(o.error!.code, 'ETOOMANYREDIRECTS');
    o = await start(host, { url: `${srv.url}/away`, body: '{"y":2}', headers: { Authorization: 'Bearer secret' } }).settled;
    assert.deepEqual(JSON.parse(Buffer.from(o.response!.body).toString()), { method: 'POST', body: '{"y":2}', auth: null });
  } finally {
    await srv.close();
    await other.close();
  }
});

test('idle timeout: no byte for idleTimeoutMs aborts; a slow but steady stream does not', async () => {
  const h = createNodeHost({ log: null, idleTimeoutMs: 400 });
  try {
    mock.push({
      handle: (_req, res) => {
        res.writeHead(200);
        res.write('first');
      },
    }); // then silence
    const o = await start(h, { url: `${mock.base}/x`, body: '{}' }).settled;
    assert.equal(o.error!.code, 'ETIMEDOUT');
    assert.equal(Buffer.concat(o.chunks).toString(), 'first');
    mock.push({ sse: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], chunkDelayMs: 100 }); // 800 ms in all, gaps of 100
    const p = await start(h, { url: `${mock.base}/x`, body: '{}' }).settled;
    assert.equal(Buffer.from(p.response!.body).toString(), 'abcdefgh');
  } finally {
    h.close();
  }
});

test('timers: fire once, cancel prevents firing, cancel after firing is harmless', async () => {
  const fired: string[] = [];
  host.setTimer(20, () => fired.push('a'));
  const b = host.setTimer(20, () => fired.push('b'));
  b.cancel();
  const c = host.setTimer(0, () => fired.push('c'));
  await sleep(60);
  c.cancel();
  c.cancel();
  assert.deepEqual(fired.sort(), ['a', 'c']);
  const t0 = host.now();
  await sleep(15);
  assert.ok(host.now() - t0 >= 10);
});

test('log: absent when disabled; given sink receives request lines without the query string', async () => {
  assert.equal(host.log, undefined);
  const lines: string[] = [];
  const h = createNodeHost({ log: (l) => lines.push(l) });
  try {
    assert.equal(typeof h.log, 'function');
    mock.push({ body: 'ok' });
    await start(h, { url: `${mock.base}/chat?key=sekrit`, body: '{}' }).settled;
    assert.ok(
      lines.some((l) => /^http POST http:\/\/127\.0\.0\.1:\d+\/v1\/chat -> 200/.test(l)),
      lines.join('\n'),
    );
    assert.ok(!lines.join('\n').includes('sekrit'));
  } finally {
    h.close();
  }
});

test('CLM_VERSION matches package.json', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.equal(CLM_VERSION, pkg.version);
});
