import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../fixtures/temp-dir.js';
import { createDebugLog } from '../../src/host/debug-log.js';
import { redact } from '../../src/host/redact.js';
import { createNodeHost } from '../../src/host/node.js';
import { startMockLlm } from '../fixtures/mock-llm.js';

const tmp = () => join(tempDir('clm-log-'), 'debug.log');

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
    if (saved === undefined) delete process.env.CLM_DEBUG_LOG;
    else process.env.CLM_DEBUG_LOG = saved;
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
  assert.deepEqual(
    lines.map((l) => l.replace(/^\S+ \[\d+\] /, '')),
    ['first', 'second', 'third', ''],
  );
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
    if (saved === undefined) delete process.env.CLM_API_KEY;
    else process.env.CLM_API_KEY = saved;
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

test('redact: a secret cut at the end of the text (an excerpt) is masked from its start', () => {
  const key = 'sk-live-0123456789abcdef';
  // Cut after 10, 5 and 4 characters: each start that is long enough is masked.
  assert.equal(redact(`body: {"msg":"${key.slice(0, 10)}`, [key]), 'body: {"msg":"[REDACTED]');
  assert.equal(redact(`tail ${key.slice(0, 5)}`, [key]), 'tail [REDACTED]');
  assert.equal(redact(`tail ${key.slice(0, 4)}`, [key]), 'tail [REDACTED]');
  // Three characters are too short to tell from ordinary text.
  assert.equal(redact(`tail ${key.slice(0, 3)}`, [key]), `tail ${key.slice(0, 3)}`);
  // Only the end of the text counts as a cut; a prefix in the middle is ordinary text.
  assert.equal(redact(`${key.slice(0, 8)} and more`, [key]), `${key.slice(0, 8)} and more`);
  // The whole secret and a cut copy in one excerpt.
  assert.equal(redact(`${key} … ${key.slice(0, 12)}`, [key]), '[REDACTED] … [REDACTED]');
  // The longest cut start wins, not the first secret that happens to match a shorter one.
  assert.equal(redact('x abcdefgh', ['abcdefghij', 'abcdZZZZ']), 'x [REDACTED]');
});

test('redact: a secret that contains another is masked whole, whatever order they are given in', () => {
  for (const order of [
    ['tok-123', 'tok-123-long'],
    ['tok-123-long', 'tok-123'],
  ]) {
    assert.equal(redact('a tok-123-long b tok-123 c', order), 'a [REDACTED] b [REDACTED] c');
  }
});

test('host: the Authorization header value it sends is never written to the log', async () => {
  const mock = await startMockLlm();
  const p = tmp();
  const host = createNodeHost({ log: createDebugLog(p) });
  try {
    mock.push({ body: { echo: 'opaque-token-xyz' } });
    await new Promise<void>((resolve) => {
      host.http(
        { url: `${mock.base}/chat/completions`, body: '{}', headers: { Authorization: 'Bearer opaque-token-xyz' } },
        {
          onResponse: () => resolve(),
          onError: () => resolve(),
        },
      );
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
