import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDebugLog } from '../../src/host/debug-log.js';
import { redact } from '../../src/host/redact.js';
import { createNodeHost } from '../../src/host/node.js';
import { startMockLlm } from '../fixtures/mock-llm.js';

const tmp = () => join(mkdtempSync(join(tmpdir(), 'clm-log-')), 'debug.log');

test('createDebugLog: undefined when no path; CLM_DEBUG_LOG is the default', () => {
  assert.equal(createDebugLog(''), undefined);
  const saved = process.env.CLM_DEBUG_LOG;
  try {
    delete process.env.CLM_DEBUG_LOG;
    assert.equal(createDebugLog(), undefined);
    const p = tmp();
    process.env.CLM_DEBUG_LOG = p;
    const log = createDebugLog();
    assert.equal(log?.path, p);
  } finally {
    if (saved === undefined) delete process.env.CLM_DEBUG_LOG; else process.env.CLM_DEBUG_LOG = saved;
  }
});

test('createDebugLog: appends prefixed lines, each on disk as soon as it is logged; the file is made lazily', () => {
  const p = tmp();
  const log = createDebugLog(p)!;
  assert.equal(existsSync(p), false, 'nothing logged, nothing created');
  log('first');
  assert.match(readFileSync(p, 'utf8'), new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} \\[${process.pid}\\] first\\n$`));
  log('second\n');
  createDebugLog(p)!('third'); // appends, never truncates
  const lines = readFileSync(p, 'utf8').split('\n');
  assert.deepEqual(lines.map((l) => l.replace(/^\S+ \[\d+\] /, '')), ['first', 'second', 'third', '']);
});

test('createDebugLog: secrets are masked — given, added later, CLM_API_KEY, bearer tokens', () => {
  const p = tmp();
  const saved = process.env.CLM_API_KEY;
  process.env.CLM_API_KEY = 'env-key-123456';
  try {
    const log = createDebugLog(p, { secrets: ['given-secret'] })!;
    log.addSecret('later-secret');
    log('a given-secret b later-secret c env-key-123456 d');
    log('Authorization: Bearer sk-abcdef');
  } finally {
    if (saved === undefined) delete process.env.CLM_API_KEY; else process.env.CLM_API_KEY = saved;
  }
  const text = readFileSync(p, 'utf8');
  for (const s of ['given-secret', 'later-secret', 'env-key-123456', 'sk-abcdef']) assert.ok(!text.includes(s), s);
  assert.match(text, /a \[REDACTED\] b \[REDACTED\] c \[REDACTED\] d/);
  assert.match(text, /Authorization: Bearer \[REDACTED\]/);
});

test('createDebugLog: an unwritable path never throws', () => {
  const log = createDebugLog('/nonexistent-dir/x/debug.log')!;
  assert.doesNotThrow(() => log('hello'));
  assert.doesNotThrow(() => log('again'));
});

test('redact: literal secrets (longest first), key-shaped fields, short values left alone', () => {
  assert.equal(redact('key=abcd1234 and abcd1234', ['abcd1234']), 'key=[REDACTED] and [REDACTED]');
  assert.equal(redact('tok-123-long tok-123', ['tok-123', 'tok-123-long']), '[REDACTED] [REDACTED]');
  assert.equal(redact('{"api_key":"zzz-999","model":"m"}'), '{"api_key":"[REDACTED]","model":"m"}');
  assert.equal(redact('x-api-key: s3cr3t'), 'x-api-key: [REDACTED]');
  assert.equal(redact('authorization=Bearer abc.def'), 'authorization=Bearer [REDACTED]');
  assert.equal(redact('a b c', ['a', '']), 'a b c');
  assert.equal(redact('nothing here', []), 'nothing here');
});

test('host: the Authorization header value it sends is never written to the log', async () => {
  const mock = await startMockLlm();
  const p = tmp();
  const host = createNodeHost({ log: createDebugLog(p) });
  try {
    mock.push({ body: { echo: 'opaque-token-xyz' } });
    await new Promise<void>((resolve) => {
      host.http({ url: `${mock.base}/chat/completions`, body: '{}', headers: { Authorization: 'Bearer opaque-token-xyz' } }, {
        onResponse: () => resolve(),
        onError: () => resolve(),
      });
    });
    // The core logs bodies through host.log; a body echoing the key must come out masked.
    host.log!('response body: {"echo":"opaque-token-xyz"}');
    const text = readFileSync(p, 'utf8');
    assert.match(text, /http POST .* -> 200/);
    assert.ok(!text.includes('opaque-token-xyz'), text);
  } finally {
    host.close();
    await mock.close();
  }
});
