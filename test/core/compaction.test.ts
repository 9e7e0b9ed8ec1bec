// What a summary request carries when the conversation would not fit the context window.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summaryInput } from '../../src/core/compaction.js';
import { estimateTokens, SUMMARY_PROMPT } from '../../src/core/history.js';
import type { Message } from '../../src/core/types.js';

const words = (n: number) => 'word '.repeat(n);
/** A conversation of `turns` turns of about 1,000 tokens, each with a tool call. */
function conversation(turns: number): Message[] {
  const h: Message[] = [
    { role: 'system', content: 'the system prompt' },
    { role: 'user', content: 'the task' },
  ];
  for (let i = 0; i < turns; i++) {
    h.push({ role: 'assistant', content: null, toolCalls: [{ id: `c${i}`, name: 'read_file', args: '{"path":"a"}' }] });
    h.push({ role: 'tool', content: words(700), toolCallId: `c${i}`, toolName: 'read_file' });
    h.push({ role: 'assistant', content: `answer ${i}` });
    h.push({ role: 'user', content: `question ${i + 1} ${words(100)}` });
  }
  return h;
}

/** How many messages the summary prompt says were left out (0: it says nothing). */
const leftOut = (sent: Message[]) =>
  Number(/^\((\d+) older messages left out: they did not fit the context window\.\) /.exec(sent.at(-1)!.content!)?.[1] ?? 0);

test('summaryInput: a conversation that fits, or a window not known, goes whole', () => {
  const h = conversation(10);
  for (const ctx of [0, 100_000]) {
    const sent = summaryInput(h, ctx);
    assert.deepEqual(sent.slice(0, -1), h);
    assert.deepEqual(sent.at(-1), { role: 'user', content: SUMMARY_PROMPT });
  }
});

test('summaryInput: over the window, the system prompt, the first message and the newest messages that fit', () => {
  const h = conversation(200); // ~200,000 tokens
  const ctx = 32_000;
  const sent = summaryInput(h, ctx);
  assert.ok(estimateTokens(sent) <= ctx * 0.6 + 200, `${estimateTokens(sent)} tokens`);
  assert.ok(estimateTokens(sent) > ctx * 0.4, 'as much as fits');
  assert.deepEqual(sent.slice(0, 2), h.slice(0, 2), 'the system prompt and the task');
  const rest = sent.slice(2, -1);
  assert.deepEqual(rest, h.slice(h.length - rest.length), 'the newest messages, none left out between');
  assert.ok(leftOut(sent) > 0);
  assert.equal(leftOut(sent), h.length - 2 - rest.length);
  assert.notEqual(rest[0]!.role, 'tool', 'no tool result without its call');
  assert.ok(sent.at(-1)!.content!.endsWith(SUMMARY_PROMPT));
});

test('summaryInput: cut only where a user or assistant message starts; the newest such goes even when alone too big', () => {
  const h: Message[] = [
    { role: 'system', content: 's' },
    { role: 'user', content: 'task' },
    { role: 'assistant', content: null, toolCalls: [{ id: 'a', name: 't', args: '{}' }] },
    { role: 'tool', content: words(5000), toolCallId: 'a', toolName: 't' },
    { role: 'tool', content: words(5000), toolCallId: 'b', toolName: 't' },
  ];
  const sent = summaryInput(h, 1000);
  assert.deepEqual(sent.slice(0, -1), h, 'the tool results keep their call');
  assert.equal(leftOut(sent), 0);
  const h2 = [...h, { role: 'assistant' as const, content: words(4000) }];
  const sent2 = summaryInput(h2, 1000);
  assert.deepEqual(sent2.slice(0, -1), [...h.slice(0, 2), h2.at(-1)!]);
  assert.equal(leftOut(sent2), 3);
});

test('summaryInput: a conversation at the compaction threshold goes whole; only one that leaves no room for the summary is cut', () => {
  const h = conversation(30); // ~33,000 tokens
  const tokens = estimateTokens(h);
  assert.equal(leftOut(summaryInput(h, Math.ceil(tokens / 0.7))), 0, 'at 70 % of the window');
  assert.equal(leftOut(summaryInput(h, Math.ceil(tokens / 0.89))), 0, 'at 89 %');
  assert.ok(leftOut(summaryInput(h, Math.floor(tokens / 0.95))) > 0, 'at 95 %');
});
