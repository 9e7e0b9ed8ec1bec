// Fault battery, the LLM server, through the real CLI: a stream cut mid-event, a reset before
// the first byte, HTML error pages, malformed SSE and JSON, a silent server, a comment-only
// stream, 429/503 with and without Retry-After, a huge reply, a dead endpoint. Each run ends
// with a clear message (no stack trace) and an exit status, and the session holds exactly what
// was said.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import * as oa from '../fixtures/openai-replies.js';
import type { Reply } from '../fixtures/mock-llm.js';
import { makeDirs, runCli, show, type CliResult } from '../fixtures/run-cli.js';
import { faultSuite, KNOWN_KEY } from '../fixtures/fault-suite.js';
import { tally } from '../fixtures/tally.js';

const suite = await faultSuite({
  config: '  first_byte_timeout_ms = 3000,\n  stream_idle_timeout_ms = 3000,\n  max_reply_bytes = 1048576,\n  probe_timeout_ms = 1000,\n',
});
const { mock, dirs, run } = suite;

const open = new Set<ServerResponse>();
after(() => {
  for (const r of open) r.destroy();
});
function handSse(feed: (res: ServerResponse) => void): Reply {
  return {
    handle: (_req, res) => {
      open.add(res);
      res.on('close', () => open.delete(res));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      feed(res);
    },
  };
}
function every(res: ServerResponse, ms: number, chunk: () => string): void {
  const t = setInterval(() => {
    if (res.destroyed) clearInterval(t);
    else res.write(chunk());
  }, ms);
  res.on('close', () => clearInterval(t));
}
const delta = (text: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`;

/** The roles (and, for the last assistant message, the text) of the run's session. */
function session(): { roles: string[]; last: string | null } {
  const files = existsSync(dirs.sessions) ? readdirSync(dirs.sessions).filter((n) => n.endsWith('.jsonl')) : [];
  assert.equal(files.length, 1, `one session file (${files.join(', ')})`);
  const lines = readFileSync(join(dirs.sessions, files[0]!), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  const msgs = lines.filter((l) => l.type === 'msg');
  return { roles: msgs.map((m) => m.role), last: msgs.filter((m) => m.role === 'assistant').at(-1)?.content ?? null };
}

/** A failed turn: exit 1, one `error:` line that matches, no stack trace, the prompt kept in the session. */
function failedWith(r: CliResult, re: RegExp): void {
  assert.equal(r.code, 1, show(r));
  const errors = r.stderr.split('\n').filter((l) => l.startsWith('error: '));
  assert.equal(errors.length, 1, show(r));
  assert.match(errors[0]!, re);
  assert.doesNotMatch(r.stderr, /\n\s+at |RangeError|TypeError/, 'no stack trace');
  assert.deepEqual(session().roles, ['user']);
}

// Started first and awaited last. Its own directories (the suite's are replaced before every
// test); its output joins the secrets scan.
let dead: Promise<CliResult>;
before(() => {
  const d = makeDirs();
  dead = runCli(['-u', 'http://127.0.0.1:1/v1', '-p', d.empty, '-o', 'anyone there?'], {
    dirs: d,
    env: { CLM_API_KEY: KNOWN_KEY },
    timeoutMs: 60_000,
  });
  void dead
    .then(
      (r) => suite.captured('the dead-endpoint run', r.stdout + r.stderr),
      () => {},
    )
    .finally(() => d.cleanup());
});

test('a stream cut in the middle of an event', async () => {
  mock.push({
    handle: (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(delta('half a '));
      res.write('data: {"choices":[{"ind');
      setTimeout(() => res.destroy(), 50);
    },
  });
  const r = await run(['-o', 'hi']);
  failedWith(r, /^error: http request failed: connection closed before the response was complete$/);
  assert.equal(r.stdout, 'half a \n', 'what arrived was shown');
  tally('faults', 1);
});

test('a connection reset before the first byte is retried; the reply then arrives', async () => {
  // Two resets: the host retries a reused keep-alive connection once by itself; the next reset
  // is the agent's to retry, with a notice.
  mock.push({ destroy: true }, { destroy: true }, oa.streamText(['back again']));
  const r = await run(['-o', 'hi']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'back again\n');
  assert.match(r.stderr, /^notice: socket hang up; retrying in \d s$/m);
  assert.deepEqual(session(), { roles: ['user', 'assistant'], last: 'back again' });
  tally('faults', 1);
});

test('HTML error pages: a 404 is shown short and not retried; a 502 is retried, then reported', async () => {
  const page = `<!DOCTYPE html><html><head><title>404 Not Found</title></head><body>${'<p>nope</p>'.repeat(200)}</body></html>`;
  mock.push({ status: 404, headers: { 'content-type': 'text/html' }, body: page });
  const r = await run(['-o', 'hi']);
  failedWith(r, /^error: HTTP 404: <!DOCTYPE html><html><head><title>404 Not Found<\/title>.{0,500}… \(\d+ bytes\)$/);
  assert.equal(mock.posts.length, 1);
  for (const f of readdirSync(dirs.sessions)) if (f.endsWith('.jsonl')) rmSync(join(dirs.sessions, f));
  mock.push(
    { status: 502, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' },
    oa.streamText(['recovered']),
  );
  const g = await run(['-o', 'hi']);
  assert.equal(g.code, 0, show(g));
  assert.equal(g.stdout, 'recovered\n');
  assert.match(g.stderr, /^notice: HTTP 502; retrying in 1 s$/m);
  assert.deepEqual(session(), { roles: ['user', 'assistant'], last: 'recovered' });
  tally('faults', 2);
});

test('malformed SSE data and a malformed JSON body: named, not swallowed', async () => {
  mock.push({ sse: [delta('ok so far'), 'data: {"choices": [{"delta": \n\n'] });
  const s = await run(['-o', 'hi']);
  failedWith(s, /^error: could not parse stream event: \{"choices": \[\{"delta":$/);
  for (const f of readdirSync(dirs.sessions)) if (f.endsWith('.jsonl')) rmSync(join(dirs.sessions, f));
  mock.push({ body: '{"choices": [{"message": {"content": "cut' });
  const j = await run(['-S', '-o', 'hi']);
  failedWith(j, /^error: could not parse llm response: \{"choices": \[\{"message": \{"content": "cut$/);
  tally('faults', 2);
});

test('a silent server: the turn ends after first_byte_timeout_ms', async () => {
  mock.push({ hang: true });
  const r = await run(['-o', 'hi']);
  failedWith(r, /^error: no reply within 3 s \(first_byte_timeout_ms\); the server accepted the request but sent no event$/);
  tally('faults', 1);
});

test('a stream of keep-alive comments only: the turn ends; comments do not keep it alive', async () => {
  mock.push(handSse((res) => every(res, 100, () => ': still thinking\n\n')));
  const r = await run(['-o', 'hi']);
  failedWith(r, /^error: no reply within 3 s \(first_byte_timeout_ms\); the server accepted the request but sent no event$/);
  tally('faults', 1);
});

test('a stream that stalls after some text ends after stream_idle_timeout_ms', async () => {
  mock.push(
    handSse((res) => {
      res.write(delta('so far so '));
      every(res, 100, () => ': ping\n\n');
    }),
  );
  const r = await run(['-o', 'hi']);
  failedWith(r, /^error: the stream stalled: no event for 3 s \(stream_idle_timeout_ms\)$/);
  assert.equal(r.stdout, 'so far so \n');
  tally('faults', 1);
});

test('429 with Retry-After and 503 without: the wait is announced (as the header says), then the reply', async () => {
  mock.push(oa.httpError(429, 'slow down', { 'retry-after': '2' }), oa.httpError(503, 'busy'), oa.streamText(['third time lucky']));
  const r = await run(['-o', 'hi']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'third time lucky\n');
  const notices = r.stderr.split('\n').filter((l) => l.startsWith('notice: '));
  assert.deepEqual(notices, ['notice: HTTP 429; retrying in 2 s', 'notice: HTTP 503; retrying in 2 s']);
  assert.equal(mock.posts.length, 3);
  assert.deepEqual(session(), { roles: ['user', 'assistant'], last: 'third time lucky' });
  tally('faults', 2);
});

test('a reply larger than max_reply_bytes (streamed without end): stopped with a clear error', async () => {
  mock.push(handSse((res) => every(res, 1, () => delta('z'.repeat(16 * 1024)))));
  const r = await run(['-o', 'talk']);
  failedWith(r, /^error: the reply was larger than 1 MiB \(max_reply_bytes\); reading it was stopped$/);
  assert.ok(r.stdout.length > 0 && r.stdout.length <= (1 << 20) + 1);
  tally('faults', 1);
});

test('a dead endpoint: a clear error at once (a refused first contact is not retried)', async () => {
  const r = await dead;
  assert.equal(r.code, 1, show(r));
  assert.match(
    r.stderr,
    /^error: cannot connect to http:\/\/127\.0\.0\.1:1\/v1\/chat\/completions \(connect ECONNREFUSED 127\.0\.0\.1:1\): is the server running, and is the URL right\?$/m,
  );
  assert.equal(r.stderr.split('\n').filter((l) => /^notice: .*retrying in/.test(l)).length, 0);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  tally('faults', 1);
});
