// Tool-call/result pairing shared by the dialects: the fast path keeps a well-paired history as
// the same objects; a broken one (a crash-cut session, a late or stray result, bad ids) is
// repaired the same way for OpenAI chat, Anthropic and Responses, prefix-stably.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isStandIn,
  MISSING_RESULT,
  needsRepair,
  pairToolCalls,
  repairPairing,
  type PairingPolicy,
} from '../../../src/core/providers/pairing.js';
import { openaiPairing } from '../../../src/core/providers/openai.js';
import { anthropicPairing } from '../../../src/core/providers/anthropic.js';
import { responsesPairing } from '../../../src/core/providers/responses.js';
import type { Message } from '../../../src/core/types.js';

const policies: [string, PairingPolicy][] = [
  ['openai', openaiPairing],
  ['anthropic', anthropicPairing],
  ['responses', responsesPairing],
];

const call = (id: string, name = 'read_file') => ({ id, name, args: '{}' });
const result = (id: string, content: string, toolName = 'read_file'): Message => ({ role: 'tool', content, toolCallId: id, toolName });

/** A normal agent history: two tool rounds (results in completion order), then text. */
function wellPaired(): Message[] {
  return [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'go' },
    { role: 'assistant', content: 'Reading.', toolCalls: [call('call_a'), call('call_b')] },
    result('call_b', 'B'),
    result('call_a', 'A'),
    { role: 'assistant', content: null, toolCalls: [call('call_c')] },
    result('call_c', 'C'),
    { role: 'assistant', content: 'done' },
    { role: 'user', content: 'thanks' },
  ];
}

/** A session cut by a crash mid-batch, restored, and continued. */
function crashCut(): Message[] {
  return [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, toolCalls: [call('c1'), call('c2', 'shell')] },
    result('c1', 'one'),
    { role: 'user', content: 'where were we?' },
  ];
}

for (const [name, policy] of policies) {
  test(`${name}: a well-paired history is the same array and objects (fast path; wire caches hold)`, () => {
    const h = wellPaired();
    assert.equal(needsRepair(h, policy), false);
    assert.equal(pairToolCalls(h, policy), h);
    // The slow path would produce exactly the same list, object for object.
    const slow = repairPairing(h, policy);
    assert.equal(slow.length, h.length);
    slow.forEach((m, i) => assert.equal(m, h[i], `message ${i}`));
  });

  test(`${name}: a crash-cut block gets a stand-in result before the conversation moves on`, () => {
    const h = crashCut();
    assert.equal(needsRepair(h, policy), true);
    const out = pairToolCalls(h, policy);
    assert.deepEqual(
      out.map((m) => [m.role, m.toolCallId ?? null, m.content]),
      [
        ['user', null, 'go'],
        ['assistant', null, null],
        ['tool', 'c1', 'one'],
        ['tool', 'c2', MISSING_RESULT],
        ['user', null, 'where were we?'],
      ],
    );
    assert.ok(isStandIn(out[3]!) && !isStandIn(out[2]!));
    assert.equal(out[3]!.toolName, 'shell');
    // Untouched messages are the original objects.
    assert.equal(out[0], h[0]);
    assert.equal(out[2], h[2]);
  });

  test(`${name}: unanswered calls at the very end are closed too`, () => {
    const out = pairToolCalls(
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, toolCalls: [call('c9')] },
      ],
      policy,
    );
    assert.deepEqual(out.at(-1), { role: 'tool', content: MISSING_RESULT, toolCallId: 'c9', toolName: 'read_file' });
  });

  test(`${name}: a result that answers no call becomes user text after the block's results`, () => {
    const out = pairToolCalls(
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, toolCalls: [call('c1')] },
        result('zzz', 'stray', 'shell'),
        result('c1', 'ok'),
        result('c1', 'answered twice'),
        { role: 'user', content: 'next' },
        result('late', ''),
      ],
      policy,
    );
    assert.deepEqual(
      out.slice(2).map((m) => [m.role, m.content]),
      [
        ['tool', 'ok'],
        ['user', '[tool result from shell]\nstray'],
        ['user', '[tool result from read_file]\nanswered twice'],
        ['user', 'next'],
        ['user', '[tool result from read_file]\n(no output)'],
      ],
    );
  });

  test(`${name}: a result arriving after the user spoke again does not answer the closed block`, () => {
    const out = pairToolCalls(
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, toolCalls: [call('c1')] },
        { role: 'user', content: 'hurry' },
        result('c1', 'late'),
      ],
      policy,
    );
    assert.deepEqual(
      out.slice(2).map((m) => [m.role, m.content]),
      [
        ['tool', MISSING_RESULT],
        ['user', 'hurry'],
        ['user', '[tool result from read_file]\nlate'],
      ],
    );
  });

  test(`${name}: duplicate and empty ids within one message become unique; results follow in order`, () => {
    const out = pairToolCalls(
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, toolCalls: [call('dup'), call('dup'), call('')] },
        result('dup', 'first'),
        result('dup', 'second'),
        result('', 'third'),
      ],
      policy,
    );
    const ids = out[1]!.toolCalls!.map((c) => c.id);
    assert.equal(ids[0], 'dup');
    assert.equal(new Set(ids).size, 3);
    assert.ok(ids.every((id) => id !== ''));
    assert.deepEqual(
      out.slice(2).map((m) => [m.toolCallId, m.content]),
      [
        [ids[0], 'first'],
        [ids[1], 'second'],
        [ids[2], 'third'],
      ],
    );
  });

  test(`${name}: repairs are prefix-stable and memoised (same bytes and objects on every build)`, () => {
    const h = crashCut();
    const first = pairToolCalls(h, policy);
    const longer = pairToolCalls([...h, { role: 'assistant', content: 'where?' }, { role: 'user', content: 'here' }], policy);
    assert.equal(JSON.stringify(longer.slice(0, first.length)), JSON.stringify(first));
    const again = pairToolCalls(h, policy);
    again.forEach((m, i) => assert.equal(m, first[i], `message ${i}`));
  });
}

test('openai: ids repeated across turns are fine (pairing is per message), so no repair', () => {
  // llama.cpp-style servers without ids get call_1 every turn.
  const h: Message[] = [
    { role: 'user', content: 'a' },
    { role: 'assistant', content: null, toolCalls: [call('call_1')] },
    result('call_1', 'r1'),
    { role: 'assistant', content: null, toolCalls: [call('call_1')] },
    result('call_1', 'r2'),
  ];
  assert.equal(pairToolCalls(h, openaiPairing), h);
  // Anthropic and Responses need request-wide unique ids: the second call is renamed, its result follows.
  for (const p of [anthropicPairing, responsesPairing]) {
    const out = pairToolCalls(h, p);
    assert.notEqual(out[3]!.toolCalls![0]!.id, 'call_1');
    assert.equal(out[4]!.toolCallId, out[3]!.toolCalls![0]!.id);
    assert.equal(out[1], h[1]);
  }
});

test('openai: ids over 40 characters are shortened (OpenAI rejects longer ones), staying unique', () => {
  const long = 'fc_' + 'x'.repeat(50);
  const out = pairToolCalls(
    [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: null, toolCalls: [call(long), call(long + 'y')] },
      result(long + 'y', 'second'),
      result(long, 'first'),
    ],
    openaiPairing,
  );
  const ids = out[1]!.toolCalls!.map((c) => c.id);
  assert.ok(
    ids.every((id) => id.length <= 40),
    ids.join(),
  );
  assert.equal(new Set(ids).size, 2);
  assert.deepEqual(
    out.slice(2).map((m) => [m.toolCallId, m.content]),
    [
      [ids[1], 'second'],
      [ids[0], 'first'],
    ],
  );
});

test('anthropic: ids outside [A-Za-z0-9_-] are rewritten without colliding', () => {
  const out = pairToolCalls(
    [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: null, toolCalls: [call('fc_1'), call('fc.1')] },
      result('fc.1', 'dot'),
      result('fc_1', 'underscore'),
    ],
    anthropicPairing,
  );
  const ids = out[1]!.toolCalls!.map((c) => c.id);
  assert.equal(ids[0], 'fc_1');
  assert.match(ids[1]!, /^[A-Za-z0-9_-]+$/);
  assert.notEqual(ids[1], 'fc_1');
  assert.deepEqual(
    out.slice(2).map((m) => [m.toolCallId, m.content]),
    [
      [ids[1], 'dot'],
      [ids[0], 'underscore'],
    ],
  );
});
