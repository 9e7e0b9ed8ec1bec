import { test } from 'node:test';
import assert from 'node:assert/strict';
import { messageToJson, messageFromJson } from '../../src/core/message-json.js';
import { ClmError } from '../../src/core/errors.js';
import type { Message } from '../../src/core/types.js';

test('lossless round trip (test_message_roundtrip)', () => {
  const h: Message[] = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'line1\nline2 "quoted" 🦴' },
    {
      role: 'assistant',
      content: null,
      toolCalls: [
        { id: 'a', name: 'read_file', args: '{"path":"x"}' },
        { id: 'b', name: 'list_dir', args: '{}' },
      ],
    },
    { role: 'tool', content: 'result', toolCallId: 'a', toolName: 'read_file' },
    { role: 'assistant', content: 'done' },
  ];
  const back: Message[] = [];
  for (const m of h) messageFromJson(back, JSON.parse(JSON.stringify(messageToJson(m))));
  assert.deepEqual(back, h);
  assert.deepEqual(Object.keys(messageToJson(h[3]!)), ['role', 'content', 'tool_call_id', 'tool_name']);
});

test('from_json rejects garbage, nothing appended (test_from_json_rejects_garbage)', () => {
  const h: Message[] = [];
  for (const bad of [
    null,
    { role: 'emperor', content: 'x' },
    { content: 'x' },
    { role: 'assistant', tool_calls: 'nope' },
    { role: 'assistant', tool_calls: [1] },
    { role: 'user', content: 5 },
    'str',
  ]) {
    assert.throws(
      () => messageFromJson(h, bad),
      (e: unknown) => e instanceof ClmError && e.code === 'EINVAL',
    );
  }
  assert.equal(h.length, 0);
  assert.throws(() => messageFromJson(h, { role: 'emperor' }), /unknown role 'emperor'/);
});
