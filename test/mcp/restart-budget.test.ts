// The respawn budget: 3 at once, then one per 30 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RestartBudget } from '../../src/mcp/restart-budget.js';

test('burst of 3, then one token per 30 s, never more than 3 banked', () => {
  let now = 1_000_000;
  const b = new RestartBudget(3, 30_000, () => now);
  assert.equal(b.take(), true);
  assert.equal(b.take(), true);
  assert.equal(b.take(), true);
  assert.equal(b.take(), false);
  assert.equal(b.msUntilNext(), 30_000);
  now += 29_999;
  assert.equal(b.take(), false);
  assert.equal(b.msUntilNext(), 1);
  now += 1;
  assert.equal(b.msUntilNext(), 0);
  assert.equal(b.take(), true);
  assert.equal(b.take(), false);
  now += 10 * 60_000; // a long quiet period refills the burst only
  assert.equal(b.take(), true);
  assert.equal(b.take(), true);
  assert.equal(b.take(), true);
  assert.equal(b.take(), false);
});

test('an idle full bucket does not pre-accrue: the first refill comes 30 s after spending', () => {
  let now = 0;
  const b = new RestartBudget(1, 30_000, () => now);
  now = 100_000;
  assert.equal(b.take(), true);
  assert.equal(b.msUntilNext(), 30_000);
});
