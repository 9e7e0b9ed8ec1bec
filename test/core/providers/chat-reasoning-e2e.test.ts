// Reasoning text of the OpenAI chat dialect carried through tool loops, end to end over the Node
// host against the mock LLM: a DeepSeek-like server that answers its exact 400 when an assistant
// message of a tool loop comes back without its reasoning_content (streamed and not); a
// Groq-like one that sends `reasoning` and refuses `reasoning_content`; the text goes back only
// to the server and model that produced it (a switch of URL or model drops it and logs so, a
// restored history keeps it unsent until the agent is on that server and model again); a history
// saved as message JSON and restored goes on with it; a compaction's summary request carries
// none; and a server that refuses the field gets the request once more without it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentConfig, Message } from '../../../src/index.js';
import { messageToJson, parseMessageJson } from '../../../src/core/message-json.js';
import { E2BIG } from '../../../src/core/errors.js';
import type { RecordedRequest, Reply } from '../../fixtures/mock-llm.js';
import * as O from '../../fixtures/openai-replies.js';
import { nodeAgentSuite } from '../../fixtures/node-agent-suite.js';

const { mock, logLines, chatConfig, withAgent } = await nodeAgentSuite();

const MODEL = 'deepseek-v4-pro';
const endpoint = () => `${mock.base}/chat/completions`;
const cfg = (o: Partial<AgentConfig> = {}): AgentConfig => chatConfig(MODEL, o);

/** DeepSeek's answer to a thinking-mode tool loop whose reasoning_content did not come back. */
const DEEPSEEK_400: Reply = {
  status: 400,
  body: { error: { message: 'The reasoning_content in the thinking mode must be passed back to the API.', type: 'invalid_request_error' } },
};

/** The reasoning of each round of the loop below, by the id of the call it came with ('' for the answer). */
const THOUGHTS: Record<string, string> = { call_1: 'I should echo a.', call_2: 'Now b.', '': 'Both echoed.' };

/** Two rounds of one call each, then the answer; each reply with its reasoning under `key`. */
function rounds(stream: boolean, key = 'reasoning_content'): Reply[] {
  const halves = (t: string) => [t.slice(0, 4), t.slice(4)];
  const call = (id: string, text: string) =>
    stream
      ? O.streamToolCall('echo', JSON.stringify({ text }), id, { reasoning: halves(THOUGHTS[id]!), reasoningKey: key })
      : O.toolCall('echo', { text }, id, { reasoning: THOUGHTS[id]!, reasoningKey: key });
  return [
    call('call_1', 'a'),
    call('call_2', 'b'),
    stream
      ? O.streamText(['All ', 'done.'], { reasoning: halves(THOUGHTS['']!), reasoningKey: key })
      : O.text('All done.', { reasoning: THOUGHTS['']!, reasoningKey: key }),
  ];
}

/** The assistant messages of a request that made tool calls. */
const callers = (req: RecordedRequest): any[] => req.json.messages.filter((m: any) => m.role === 'assistant' && m.tool_calls);

/**
 * A DeepSeek-like server in thinking mode: `replies` in order, but a request in which an
 * assistant message that made tool calls lacks the reasoning_content that came with it gets the 400.
 */
function deepseek(replies: Reply[]): (req: RecordedRequest) => Reply {
  let next = 0;
  return (req) => {
    for (const m of callers(req)) if (m.reasoning_content !== THOUGHTS[m.tool_calls[0].id]) return DEEPSEEK_400;
    return replies[next++] ?? O.text('ok');
  };
}

const part = (text: string, field = 'reasoning_content', model = MODEL, url = endpoint()) => ({
  dialect: 'openai',
  type: 'reasoning_text',
  field,
  text,
  origin: `${model}@${url}`,
});

const since = (mark: number) => logLines.slice(mark).join('\n');

for (const stream of [false, true]) {
  const mode = stream ? 'streamed' : 'whole';

  test(`deepseek-like ${mode}: each round's reasoning_content goes back with its tool calls, and the loop completes`, async () => {
    await withAgent(cfg({ stream }), async (a) => {
      mock.script(deepseek(rounds(stream)));
      const r = await a.run('echo a, then b');
      assert.equal(r.status, 0, r.error);
      assert.equal(r.text, 'All done.');
      assert.equal(mock.posts.length, 3, 'no request was refused');
      const second = mock.posts[1]!;
      assert.match(
        second.body,
        /\{"role":"assistant","content":null,"reasoning_content":"I should echo a\.","tool_calls":\[\{"id":"call_1"/,
        'next to the content and the calls it came with',
      );
      assert.deepEqual(
        callers(mock.posts[2]!).map((m) => m.reasoning_content),
        ['I should echo a.', 'Now b.'],
        'every earlier round still carries its own',
      );
      assert.doesNotMatch(mock.posts[2]!.body, /"reasoning"/);
      const kept = a.messages.filter((m) => m.role === 'assistant').map((m) => (m as { reasoning?: unknown }).reasoning);
      assert.deepEqual(kept, [[part('I should echo a.')], [part('Now b.')], [part('Both echoed.')]], 'the whole text of each reply, once');
      assert.ok(
        a.messages.every((m) => !m.content?.includes('echo a.')),
        'reasoning is never part of the text',
      );
      // The next turn carries the answer's reasoning too (DeepSeek ignores it there).
      mock.push(O.text('bye'));
      assert.equal((await a.run('thanks')).status, 0);
      assert.equal(mock.posts.at(-1)!.json.messages.at(-2).reasoning_content, 'Both echoed.');
      // A compaction's summary request carries none of it.
      mock.push(O.text('ok', { reasoning: 'Nothing to do.' }), O.text('the summary'));
      assert.equal((await a.run('one more')).status, 0);
      assert.equal((await a.compactAndWait()).status, 0);
      assert.doesNotMatch(mock.posts.at(-1)!.body, /reasoning|echo a\.|Nothing to do/);
      assert.ok(
        a.messages.some((m) => m.role === 'assistant' && m.reasoning?.length),
        'a kept message keeps its own',
      );
    });
  });

  test(`groq-like ${mode}: \`reasoning\` goes back under its own name, never as reasoning_content`, async () => {
    await withAgent(cfg({ stream, model: 'openai/gpt-oss-120b' }), async (a) => {
      const replies = rounds(stream, 'reasoning');
      let next = 0;
      mock.script((req) => {
        const i = req.json.messages.findIndex((m: any) => m.role === 'assistant' && 'reasoning_content' in m);
        if (i >= 0)
          return O.httpError(
            400,
            `'messages.${i}' : for 'role:assistant' the following must be satisfied[('messages.${i}' : property 'reasoning_content' is unsupported)]`,
          );
        return replies[next++]!;
      });
      const r = await a.run('echo a, then b');
      assert.equal(r.status, 0, r.error);
      assert.equal(mock.posts.length, 3);
      assert.deepEqual(
        callers(mock.posts[2]!).map((m) => m.reasoning),
        ['I should echo a.', 'Now b.'],
      );
      assert.deepEqual((a.messages.at(-1) as { reasoning?: unknown }).reasoning, [
        part('Both echoed.', 'reasoning', 'openai/gpt-oss-120b'),
      ]);
    });
  });
}

test('a switch to another URL or another model drops the reasoning and logs so; a restored history sends it only on its own server and model', async () => {
  let saved: Message[] = [];
  for (const next of [{ baseUrl: `${mock.url}/v2/chat/completions` }, { model: 'deepseek-v4-flash' }]) {
    await withAgent(cfg(), async (a) => {
      mock.script(deepseek(rounds(false)));
      assert.equal((await a.run('echo a, then b')).status, 0);
      saved = a.messages;
      const mark = logLines.length;
      a.setProvider(cfg(next));
      const to = `${next.model ?? MODEL} at ${next.baseUrl ?? endpoint()}`;
      assert.match(
        since(mark),
        new RegExp(`^dropped 3 reasoning parts of another server or model: openai requests to ${to} cannot carry them$`, 'm'),
      );
      assert.doesNotMatch(since(mark), /of another dialect/);
      assert.ok(a.messages.every((m) => m.role !== 'assistant' || m.reasoning === undefined));
      mock.script(() => O.text('ok'));
      assert.equal((await a.run('next')).status, 0);
      assert.doesNotMatch(mock.posts.at(-1)!.body, /reasoning|echo a\./, 'none of it is sent');
      assert.match(mock.posts.at(-1)!.body, /echo:a/, 'the rest of the conversation goes on');
    });
  }

  // A session resumed on another model keeps the parts but does not send them; back on the model
  // that produced them, they go again.
  await withAgent(cfg({ model: 'deepseek-v4-flash' }), async (b) => {
    const mark = logLines.length;
    b.restoreHistory(saved.map((m) => parseMessageJson(JSON.parse(JSON.stringify(messageToJson(m))))));
    assert.match(
      since(mark),
      new RegExp(
        `^the restored history holds 3 reasoning parts of another server or model; openai requests to deepseek-v4-flash at ${endpoint()} do not carry them$`,
        'm',
      ),
    );
    mock.script(() => O.text('ok'));
    assert.equal((await b.run('next')).status, 0);
    assert.doesNotMatch(mock.posts.at(-1)!.body, /reasoning/);
    const back = logLines.length;
    b.setProvider(cfg());
    assert.doesNotMatch(since(back), /dropped/, 'its own server and model take them');
    mock.script(deepseek([O.text('again')]));
    assert.equal((await b.run('again')).status, 0);
    assert.deepEqual(
      mock.posts
        .at(-1)!
        .json.messages.filter((m: any) => m.reasoning_content)
        .map((m: any) => m.reasoning_content),
      ['I should echo a.', 'Now b.', 'Both echoed.'],
    );
  });
});

for (const stream of [false, true]) {
  test(`a history saved as message JSON mid tool loop and restored goes on carrying the reasoning (${stream ? 'streamed' : 'whole'})`, async () => {
    let saved: unknown[] = [];
    await withAgent(cfg({ stream, maxIterations: 1 }), async (a) => {
      mock.script(deepseek(rounds(stream)));
      const r = await a.run('echo a, then b');
      assert.equal(r.status, E2BIG, 'stopped after one round');
      saved = JSON.parse(JSON.stringify(a.messages.map(messageToJson)));
    });
    assert.deepEqual((saved[2] as { reasoning?: unknown }).reasoning, [part('I should echo a.')], 'the session form keeps the part');
    await withAgent(cfg({ stream }), async (b) => {
      b.restoreHistory(saved.map((j) => parseMessageJson(j)));
      const rest = rounds(stream).slice(1);
      mock.script(deepseek(rest));
      const r = await b.run('go on');
      assert.equal(r.status, 0, r.error);
      assert.equal(r.text, 'All done.');
      assert.equal(mock.posts.length, 2, 'no request was refused');
      assert.deepEqual(
        callers(mock.posts[1]!).map((m) => m.reasoning_content),
        ['I should echo a.', 'Now b.'],
      );
    });
  });
}

test('a server that refuses the field: the parts are dropped, the request goes once more without them, and the turn completes', async () => {
  await withAgent(cfg(), async (a) => {
    let next = 0;
    const replies = [
      O.toolCall('echo', { text: 'a' }, 'call_1', { reasoning: 'think a' }),
      O.toolCall('echo', { text: 'b' }, 'call_2', { reasoning: 'think b' }),
      O.text('done', { reasoning: 'think c' }),
    ];
    mock.script((req) =>
      /reasoning_content/.test(req.body)
        ? O.httpError(400, "Additional properties are not allowed ('reasoning_content' was unexpected) - 'messages.2'")
        : replies[next++]!,
    );
    const mark = logLines.length;
    const r = await a.run('echo a, then b');
    assert.equal(r.status, 0, r.error);
    assert.equal(r.text, 'done');
    assert.deepEqual(
      mock.posts.map((p) => /reasoning_content/.test(p.body)),
      [false, true, false, false],
      'sent once with it, again without it, and not again on this connection',
    );
    assert.equal(
      logLines
        .slice(mark)
        .filter((l) =>
          /^the server refused the reasoning sent back \(HTTP 400: Additional properties are not allowed \('reasoning_content' was unexpected\) - 'messages\.2'\); sending the request again without it \(1 dropped\)$/.test(
            l,
          ),
        ).length,
      1,
      since(mark),
    );
    assert.ok(
      a.messages.every((m) => m.role !== 'assistant' || m.reasoning === undefined),
      'the history holds none of it',
    );
  });
});

test("DeepSeek's own 400 is not a refusal of the field: the turn fails with its message, nothing is sent again", async () => {
  await withAgent(cfg(), async (a) => {
    mock.script(() => DEEPSEEK_400);
    const r = await a.run('hi');
    assert.notEqual(r.status, 0);
    assert.match(r.error ?? '', /^HTTP 400: The reasoning_content in the thinking mode must be passed back to the API\.$/);
    assert.equal(mock.posts.length, 1);
  });
});
