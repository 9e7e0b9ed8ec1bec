// Tool calls local models write as text, end to end: a real agent with repairToolCalls over the
// Node host against the mock LLM, each fixture streamed in token-sized deltas (tags split inside)
// and whole. Each call becomes a real one the tool runs and the next request carries; what
// precedes it stays the reply's text; nothing of the call is ever shown as text; prose quoting
// a call, and a call to a tool not offered, stay text.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockLlmPerFile } from '../../fixtures/mock-llm-per-file.js';
import * as oa from '../../fixtures/openai-replies.js';
import { harness } from '../../fixtures/agent-harness.js';
import { FIXTURES, textCallTools } from '../../fixtures/text-call-replies.js';
import { repairToolCalls } from '../../../src/core/providers/tool-call-repair.js';
import type { AgentEvent } from '../../../src/core/events.js';
import type { ToolDef } from '../../../src/core/types.js';

const mock = await mockLlmPerFile();

for (const f of FIXTURES) {
  for (const stream of [true, false]) {
    test(`${f.name} (${stream ? 'streamed' : 'whole'})`, async () => {
      const whole = f.chunks.join('');
      mock.push(stream ? oa.streamText(f.chunks) : oa.text(whole), oa.text('all done'));
      const r = harness(mock, { cfg: { stream, repairToolCalls }, tools: textCallTools() });
      const events: AgentEvent[] = [];
      r.agent.subscribe((e) => events.push(e));
      const done = r.turnDone();
      r.agent.submit('go');
      assert.equal(await done, 0);
      const repairs = events.filter((e) => e.type === 'repair').map((e) => e.text);
      if (!f.calls) {
        assert.equal(mock.posts.length, 1, 'no tool round');
        assert.equal(r.text, whole, 'the whole reply shown as text');
        assert.deepEqual(repairs, []);
        assert.equal(r.agent.messages.at(-1)!.content, whole);
        return;
      }
      assert.equal(mock.posts.length, 2);
      assert.deepEqual(
        r.results.map((x) => x.name),
        f.calls.map((c) => c.name),
      );
      for (const [i, c] of f.calls.entries()) assert.deepEqual(JSON.parse(r.results[i]!.content.replace(/^\S+ got /, '')), c.args);
      // The next request carries the calls as tool_calls, with arguments as valid JSON.
      const sent = mock.posts[1]!.json.messages.find((m: any) => m.role === 'assistant');
      assert.deepEqual(
        sent.tool_calls.map((c: any) => [c.function.name, JSON.parse(c.function.arguments)]),
        f.calls.map((c) => [c.name, c.args]),
      );
      assert.equal(sent.content, f.text);
      // What the person saw: the prose before the calls (give or take trailing blanks), then the final answer.
      assert.equal(r.text.replace(/\s+all done$/, 'all done'), `${f.text ?? ''}all done`);
      assert.ok(
        repairs.some((t) => /^repaired (a tool call|\d+ tool calls) written as text$/.test(t)),
        repairs.join('; '),
      );
    });
  }
}

test('without repairToolCalls a call written as text stays text', async () => {
  const f = FIXTURES[0]!;
  mock.push(oa.streamText(f.chunks));
  const r = harness(mock, { cfg: { stream: true }, tools: textCallTools() });
  const done = r.turnDone();
  r.agent.submit('go');
  assert.equal(await done, 0);
  assert.equal(mock.posts.length, 1);
  assert.equal(r.text, f.chunks.join(''));
});

test('tool_calls with broken arguments and a misspelt name are repaired, and said so', async () => {
  mock.push(oa.toolCall('READ_FILE', "{'path': 'x.txt', 'offset': '7',}"), oa.text('ok'));
  const r = harness(mock, { cfg: { repairToolCalls }, tools: textCallTools() });
  const events: AgentEvent[] = [];
  r.agent.subscribe((e) => events.push(e));
  const done = r.turnDone();
  r.agent.submit('go');
  assert.equal(await done, 0);
  assert.equal(r.results[0]!.content, 'read_file got {"path":"x.txt","offset":7}');
  assert.deepEqual(
    events.filter((e) => e.type === 'repair').map((e) => e.text),
    ["mapped the tool name 'READ_FILE' to 'read_file'", 'repaired the arguments of a call to read_file'],
  );
  assert.equal(mock.posts[1]!.json.messages.at(-2).tool_calls[0].function.arguments, '{"path":"x.txt","offset":7}');
});

test('arguments that do not fit the schema fail the call with a message naming the argument, before it runs', async () => {
  let ran = 0;
  const tools = textCallTools().map(
    (t): ToolDef => ({
      ...t,
      invoke: (inv) => {
        ran++;
        inv.complete('ran');
      },
    }),
  );
  mock.push(
    oa.toolCalls([
      { name: 'read_file', args: { offset: 3 } },
      { name: 'shell_exec', args: { command: ['ls'] } },
    ]),
    oa.text('ok'),
  );
  const r = harness(mock, { cfg: { repairToolCalls }, tools });
  const done = r.turnDone();
  r.agent.submit('go');
  assert.equal(await done, 0);
  assert.equal(ran, 0);
  assert.deepEqual(
    r.results.map((x) => [x.outcome, x.content]),
    [
      ['failed', "[tool failed: argument 'path' is required (string)]"],
      ['failed', `[tool failed: argument 'command' must be a string, got an array (["ls"])]`],
    ],
  );
});

test('a gated call whose arguments do not fit is not put to the person', async () => {
  const tools = textCallTools().map((t) => ({ ...t, noPrompt: false }));
  mock.push(oa.toolCall('read_file', {}), oa.text('ok'));
  const r = harness(mock, { cfg: { repairToolCalls }, tools, permission: 'allow_once' });
  const done = r.turnDone();
  r.agent.submit('go');
  assert.equal(await done, 0);
  assert.deepEqual(r.permissions, []);
  assert.match(r.results[0]!.content, /argument 'path' is required/);
});
