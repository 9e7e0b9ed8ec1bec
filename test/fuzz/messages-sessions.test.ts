// Fuzzing the lossless message JSON and the session line format:
// - any message round-trips exactly (messageToJson → parse, and through a JSONL line);
// - any JSON value is either a message or a ClmError EINVAL (never another throw), and any line
//   of text is a meta/msg/compact record or skipped — a whole file of noise never throws;
// - restoreHistory accepts what it can parse and refuses the rest with EINVAL, appending nothing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { messageToJson, parseMessageJson } from '../../src/core/message-json.js';
import { ClmError } from '../../src/core/errors.js';
import { encodeCompactLine, encodeMessageLine, encodeMetaLine, parseSessionLine, parseSessionText } from '../../src/session/format.js';
import { SessionError } from '../../src/session/errors.js';
import { createAgent } from '../../src/core/agent.js';
import type { Message } from '../../src/core/types.js';
import { scriptedHost } from '../fixtures/scripted-host.js';
import { anyText, check, fc } from '../fixtures/fuzz.js';

const call = fc.record(
  {
    id: anyText(20),
    name: anyText(20),
    args: fc.oneof(
      anyText(40),
      fc.jsonValue().map((v) => JSON.stringify(v)),
    ),
  },
  { noNullPrototype: true },
);
const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

/** A message as the engine makes them: tool calls only on assistant messages. */
const message: fc.Arbitrary<Message> = fc
  .oneof(
    fc.record(
      { role: fc.constantFrom('system' as const, 'user' as const), content: fc.option(anyText(60), { nil: null }) },
      { noNullPrototype: true },
    ),
    fc.record(
      {
        role: fc.constant('assistant' as const),
        content: fc.option(anyText(60), { nil: null }),
        toolCalls: optional(fc.array(call, { minLength: 1, maxLength: 3 })),
      },
      { requiredKeys: ['role', 'content'], noNullPrototype: true },
    ),
    fc.record(
      {
        role: fc.constant('tool' as const),
        content: fc.option(anyText(60), { nil: null }),
        toolCallId: optional(anyText(20)),
        toolName: optional(anyText(20)),
      },
      { requiredKeys: ['role', 'content'], noNullPrototype: true },
    ),
  )
  .map((m) => {
    const out = { ...m } as Message;
    for (const k of Object.keys(out) as (keyof Message)[]) if (out[k] === undefined) delete out[k];
    return out;
  });

/** What the round trip must keep: content '' and null are distinct; a user/system null stays null. */
const canonical = (m: Message): Message => ({ ...m, content: m.content ?? null });

test('message JSON: any message round-trips exactly, also through JSON text', () => {
  check(1000, message, (m) => {
    const j = messageToJson(m);
    assert.deepEqual(parseMessageJson(j), canonical(m));
    assert.deepEqual(parseMessageJson(JSON.parse(JSON.stringify(j))), canonical(m));
  });
});

test('message JSON: any JSON value is a message or a ClmError EINVAL with a message', () => {
  const shaped = fc.record(
    {
      role: fc.oneof(fc.constantFrom('system', 'user', 'assistant', 'tool', 'bot', ''), fc.jsonValue()),
      content: fc.jsonValue(),
      tool_call_id: fc.jsonValue(),
      tool_name: fc.jsonValue(),
      tool_calls: fc.oneof(
        fc.jsonValue(),
        fc.array(
          fc.oneof(fc.jsonValue(), fc.record({ id: fc.jsonValue(), name: fc.jsonValue(), args: fc.jsonValue() }, { requiredKeys: [] })),
        ),
      ),
    },
    { requiredKeys: [] },
  );
  check(1000, fc.oneof(fc.jsonValue(), shaped, fc.anything()), (v) => {
    try {
      const m = parseMessageJson(v);
      assert.ok(['system', 'user', 'assistant', 'tool'].includes(m.role));
      assert.ok(m.content === null || typeof m.content === 'string');
      // What was accepted serialises back to the same message.
      assert.deepEqual(parseMessageJson(messageToJson(m)), m);
    } catch (e) {
      assert.ok(e instanceof ClmError, `${(e as Error)?.constructor?.name}: ${String(e)}`);
      assert.equal(e.code, 'EINVAL');
      assert.ok(e.message.length > 0);
    }
  });
});

test('session lines: meta, messages and compactions round-trip through their line text', () => {
  const meta = fc.record(
    {
      id: anyText(30),
      created: fc.integer({ min: 0, max: 2 ** 40 }),
      model: optional(anyText(20)),
      provider: optional(anyText(10)),
      agent: optional(anyText(10)),
    },
    { noNullPrototype: true },
  );
  check(500, fc.record({ meta, messages: fc.array(message, { maxLength: 6 }) }), ({ meta: mt, messages }) => {
    const lines = [encodeMetaLine(mt), ...messages.map(encodeMessageLine)];
    for (const l of lines) assert.ok(l.endsWith('\n') && !l.slice(0, -1).includes('\n'), 'one line each');
    const parsed = parseSessionText(lines.join(''));
    const expectMeta: Record<string, unknown> = { type: 'meta', v: 1, ...mt };
    for (const k of Object.keys(expectMeta)) if (expectMeta[k] === undefined) delete expectMeta[k];
    assert.deepEqual(parsed.meta, expectMeta);
    assert.deepEqual(parsed.messages, messages.map(canonical));
  });
  check(300, fc.record({ index: fc.nat(), count: fc.integer({ min: 1, max: 1e6 }), summary: anyText(40) }), (c) => {
    assert.deepEqual(parseSessionLine(encodeCompactLine(c).trimEnd()), { kind: 'compact', ...c });
  });
});

test('session lines: any text is a record or skipped; only a newer format version is refused, with a SessionError', () => {
  const line = fc.oneof(
    anyText(80),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc
      .record(
        {
          type: fc.constantFrom('meta', 'msg', 'compact', 'other'),
          v: fc.jsonValue(),
          id: fc.jsonValue(),
          created: fc.jsonValue(),
          index: fc.jsonValue(),
          count: fc.jsonValue(),
          summary: fc.jsonValue(),
          role: fc.jsonValue(),
          content: fc.jsonValue(),
        },
        { requiredKeys: ['type'] },
      )
      .map((o) => JSON.stringify(o)),
  );
  check(1000, fc.array(line, { maxLength: 8 }), (lines) => {
    for (const l of lines) {
      try {
        const p = parseSessionLine(l);
        assert.ok(['meta', 'msg', 'compact', 'skip'].includes(p.kind));
      } catch (e) {
        assert.ok(e instanceof SessionError && e.code === 'EPROTONOSUPPORT', String(e));
      }
    }
    try {
      const t = parseSessionText(lines.join('\n'));
      for (const m of t.messages) assert.deepEqual(parseMessageJson(messageToJson(m)), m);
    } catch (e) {
      assert.ok(e instanceof SessionError && e.code === 'EPROTONOSUPPORT', String(e));
    }
  });
});

test('restoreHistory: well-formed messages are kept exactly; anything else is EINVAL and appends nothing', () => {
  const agent = createAgent({ baseUrl: 'http://127.0.0.1:1/v1/chat/completions' }, scriptedHost([]));
  check(
    500,
    fc.array(
      fc.oneof(
        message.map((m) => m as unknown),
        fc.anything(),
      ),
      { maxLength: 5 },
    ),
    (list) => {
      agent.clearHistory();
      const before = agent.messages.length;
      try {
        agent.restoreHistory(list as Message[]);
        const kept = (list as Message[]).filter((m) => m.role !== 'system').map((m) => parseMessageJson(messageToJson(m)));
        assert.deepEqual(agent.messages.slice(before), kept);
      } catch (e) {
        assert.ok(e instanceof ClmError && e.code === 'EINVAL', String(e));
        assert.equal(agent.messages.length, before);
      }
    },
  );
  agent.close();
});
