// The original's test_message_roundtrip / test_from_json_rejects_garbage, through the session line format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { messageFromJson, messageToJson } from '../../src/core/message-json.js';
import type { Message } from '../../src/core/types.js';
import { encodeMessageLine, parseSessionLine } from '../../src/session/format.js';

const history: Message[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'line one\nline "two" with \\ and 🦴' },
  {
    role: 'assistant',
    content: null,
    toolCalls: [
      { id: 'call_1', name: 'read_file', args: '{"path":"a.txt"}' },
      { id: 'call_2', name: 'shell_exec', args: '{"cmd":"echo \\"hi\\""}' },
    ],
  },
  { role: 'tool', content: 'file body\n', toolCallId: 'call_1', toolName: 'read_file' },
  { role: 'assistant', content: 'Done: “ok” ✓' },
];

test('message round trip: lossless JSON keeps tool_name, null content and call order', () => {
  const back: Message[] = [];
  for (const m of history) messageFromJson(back, JSON.parse(JSON.stringify(messageToJson(m))));
  assert.deepEqual(back, history);
});

test('message round trip through session lines; "type" is the last key', () => {
  for (const m of history) {
    const line = encodeMessageLine(m);
    assert.ok(line.endsWith(',"type":"msg"}\n'), line);
    assert.equal(line.indexOf('\n'), line.length - 1, 'one line per message');
    const p = parseSessionLine(line.trimEnd());
    assert.equal(p.kind, 'msg');
    assert.deepEqual(p.kind === 'msg' && p.message, m);
  }
  assert.equal(
    encodeMessageLine(history[2]!),
    '{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","name":"read_file","args":"{\\"path\\":\\"a.txt\\"}"},{"id":"call_2","name":"shell_exec","args":"{\\"cmd\\":\\"echo \\\\\\"hi\\\\\\"\\"}"}],"type":"msg"}\n',
  );
});

test('from_json rejects garbage and appends nothing', () => {
  const h: Message[] = [];
  for (const bad of [
    null,
    { role: 'emperor', content: 'x' },
    { content: 'no role' },
    { role: 'assistant', content: null, tool_calls: 'nope' },
  ]) {
    assert.throws(
      () => messageFromJson(h, bad),
      (e: any) => e.code === 'EINVAL',
    );
  }
  assert.equal(h.length, 0);
  // In a session file the same garbage is skipped rather than fatal.
  assert.deepEqual(parseSessionLine('{"role":"emperor","type":"msg"}'), { kind: 'skip', damaged: true });
  assert.deepEqual(parseSessionLine('{"role":"assistant","tool_calls":{},"type":"msg"}'), { kind: 'skip', damaged: true });
});
