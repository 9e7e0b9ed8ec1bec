// The token bucket behind the request and tool rate limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TokenBucket } from '../../src/core/ratelimit.js';

test('token bucket: starts full, waits, refills fractionally', () => {
  let t = 0;
  const b = new TokenBucket(10, 20, () => t);
  assert.equal(b.delay(20), 0);
  b.consume(20);
  assert.equal(b.delay(1), 100);
  t += 50;
  assert.equal(b.delay(1), 50);
  t += 50;
  assert.equal(b.delay(1), 0);
});
