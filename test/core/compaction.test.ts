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

test('summaryInput: a conversation that fits, or a window not known, goes whole', () => {
  const h = conversation(10);
  for (const ctx of [0, 100_000]) {
    const r = summaryInput(h, ctx);
    assert.equal(r.omitted, 0);
    assert.deepEqual(r.messages.slice(0, -1), h);
    assert.deepEqual(r.messages.at(-1), { role: 'user', content: SUMMARY_PROMPT });
  }
});

test('summaryInput: over the window, the system prompt, the first message and the newest messages that fit', () => {
  const h = conversation(200); // ~200,000 tokens
  const ctx = 32_000;
  const r = summaryInput(h, ctx);
  assert.ok(r.omitted > 0);
  assert.ok(estimateTokens(r.messages) <= ctx * 0.6 + 200, `${estimateTokens(r.messages)} tokens`);
  assert.ok(estimateTokens(r.messages) > ctx * 0.4, 'as much as fits');
  assert.deepEqual(r.messages.slice(0, 2), h.slice(0, 2), 'the system prompt and the task');
  const rest = r.messages.slice(2, -1);
  assert.deepEqual(rest, h.slice(h.length - rest.length), 'the newest messages, none left out between');
  assert.equal(r.omitted, h.length - 2 - rest.length);
  assert.notEqual(rest[0]!.role, 'tool', 'no tool result without its call');
  assert.match(
    r.messages.at(-1)!.content!,
    new RegExp(`^\\(${r.omitted} earlier messages .* did not fit the context window\\.\\) Summarize`),
  );
});

test('summaryInput: cut only where a user or assistant message starts; the newest such goes even when alone too big', () => {
  const h: Message[] = [
    { role: 'system', content: 's' },
    { role: 'user', content: 'task' },
    { role: 'assistant', content: null, toolCalls: [{ id: 'a', name: 't', args: '{}' }] },
    { role: 'tool', content: words(5000), toolCallId: 'a', toolName: 't' },
    { role: 'tool', content: words(5000), toolCallId: 'b', toolName: 't' },
  ];
  const r = summaryInput(h, 1000);
  assert.deepEqual(r.messages.slice(0, -1), h, 'the tool results keep their call');
  assert.equal(r.omitted, 0);
  const h2 = [...h, { role: 'assistant' as const, content: words(4000) }];
  const r2 = summaryInput(h2, 1000);
  assert.deepEqual(r2.messages.slice(0, -1), [...h.slice(0, 2), h2.at(-1)!]);
  assert.equal(r2.omitted, 3);
});

test('summaryInput: a conversation at the compaction threshold goes whole; only one that leaves no room for the summary is cut', () => {
  const h = conversation(30); // ~33,000 tokens
  const tokens = estimateTokens(h);
  assert.equal(summaryInput(h, Math.ceil(tokens / 0.7)).omitted, 0, 'at 70 % of the window');
  assert.equal(summaryInput(h, Math.ceil(tokens / 0.89)).omitted, 0, 'at 89 %');
  assert.ok(summaryInput(h, Math.floor(tokens / 0.95)).omitted > 0, 'at 95 %');
});
