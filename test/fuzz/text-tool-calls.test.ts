// Fuzzing the repair of tool calls written as text:
// - any split of a fixture's reply into streamed pieces gives the same calls, the same reply
//   text, and shows the same text as the reply taken whole — never a piece of a call;
// - any text, streamed in any pieces, ends with what was shown a prefix of the reply, and the
//   whole reply shown when it held no call; nothing throws.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repairToolCalls } from '../../src/core/providers/tool-call-repair.js';
import type { ToolSchema } from '../../src/core/providers/adapter.js';
import type { AgentEvent } from '../../src/core/events.js';
import type { ParsedReply } from '../../src/core/providers/adapter.js';
import { FIXTURES, textCallTools } from '../fixtures/text-call-replies.js';
import { check, cutAt, fc } from '../fixtures/fuzz.js';

const TOOLS: ToolSchema[] = textCallTools().map((t) => ({
  name: t.name,
  description: t.description ?? '',
  parameters: t.parameters as Record<string, unknown>,
  parametersJson: JSON.stringify(t.parameters),
}));

/** The reply `text` streamed in `pieces` (or whole when none) through the repair: what it became and what was shown. */
function run(text: string, pieces: string[] | null): { reply: ParsedReply; shown: string } {
  let shown = '';
  const events: AgentEvent[] = [];
  const fix = repairToolCalls.reply(
    TOOLS,
    (t) => {
      shown += t;
    },
    (e) => events.push(e),
  );
  for (const p of pieces ?? []) fix.text(p);
  const reply = fix.end({ content: text, reasoning: null, toolCalls: [], finishReason: 'stop', usage: null });
  return { reply, shown };
}

test('any split of a fixture into streamed pieces gives the same calls and shows no part of them', () => {
  const arb = fc.record({ f: fc.constantFrom(...FIXTURES), cuts: fc.array(fc.nat(), { maxLength: 40 }) });
  check(400, arb, ({ f, cuts }) => {
    const text = f.chunks.join('');
    const whole = run(text, null);
    const streamed = run(text, cutAt(text, cuts));
    assert.deepEqual(streamed.reply, whole.reply);
    assert.deepEqual(
      whole.reply.toolCalls.map((c) => [c.name, JSON.parse(c.args)]),
      (f.calls ?? []).map((c) => [c.name, c.args]),
    );
    if (f.calls) assert.equal(streamed.shown.trimEnd(), f.text ?? '');
    else assert.equal(streamed.shown, text);
    return true;
  });
});

// Pieces that make tags, fences, JSON and prose collide.
const ATOMS = [
  '<tool_call>',
  '</tool_call>',
  '<function=read_file>',
  '<parameter=path>',
  '</parameter>',
  '</function>',
  '[TOOL_CALLS]',
  '[ARGS]',
  '<|python_tag|>',
  '<|im_end|>',
  '```',
  '```json\n',
  '`',
  '{',
  '}',
  '[',
  ']',
  '"',
  '\\',
  ':',
  ',',
  '\n',
  ' ',
  '"name"',
  '"arguments"',
  '"read_file"',
  '"path"',
  '"x"',
  'text',
  '<',
  '<tool',
  '[TOOL',
];

test('any text in any pieces: what is shown is a prefix of the reply, all of it when it held no call', () => {
  const arb = fc.record({
    parts: fc.array(fc.oneof(fc.constantFrom(...ATOMS), fc.string({ maxLength: 6 })), { maxLength: 30 }),
    cuts: fc.array(fc.nat(), { maxLength: 20 }),
  });
  check(600, arb, ({ parts, cuts }) => {
    const text = parts.join('');
    const whole = run(text, null);
    const streamed = run(text, cutAt(text, cuts));
    assert.deepEqual(streamed.reply, whole.reply);
    if (whole.reply.toolCalls.length) assert.ok(text.startsWith(streamed.shown), 'a prefix of the reply');
    else assert.equal(streamed.shown, text);
    return true;
  });
});

test('prose is shown as it streams: after each piece, all of it so far (however long the reply)', () => {
  const arb = fc.record({
    // No character a call can begin with; each piece ends a word, so nothing is held at its end.
    words: fc.array(fc.stringMatching(/^[a-z.,!?]{1,12}$/), { minLength: 1, maxLength: 60 }),
    cuts: fc.array(fc.nat(), { maxLength: 20 }),
  });
  check(300, arb, ({ words, cuts }) => {
    const pieces = cutAt(words.join(' '), cuts);
    let shown = '';
    let sent = '';
    const fix = repairToolCalls.reply(
      TOOLS,
      (t) => {
        shown += t;
      },
      () => {},
    );
    for (const p of pieces) {
      fix.text(p);
      sent += p;
      assert.equal(shown, sent);
    }
    return true;
  });
});
