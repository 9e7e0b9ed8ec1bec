// Gemini's thought signatures through the OpenAI chat dialect, end to end over the Node host
// against the mock LLM: a Gemini-like server (two parallel calls, the first signed under
// `extra_content`; then a signed single call; then a signed text answer) answers Gemini's exact
// 400 to a request in which one of its calls lacks the extra_content it came with, whole and
// streamed as Gemini streams (each call whole in a delta of its own, no index; the signature on
// it or on a fragment of its own); a switch of model drops the signatures and logs so, a restored
// history keeps them unsent until the agent is on that server and model again; a history saved
// as message JSON mid loop and restored goes on with them; a server that refuses the field gets
// the request once more without it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentConfig, Message } from '../../../src/index.js';
import { messageToJson, parseMessageJson } from '../../../src/core/message-json.js';
import { E2BIG } from '../../../src/core/errors.js';
import type { RecordedRequest, Reply } from '../../fixtures/mock-llm.js';
import * as O from '../../fixtures/openai-replies.js';
import { nodeAgentSuite } from '../../fixtures/node-agent-suite.js';

const { mock, logLines, chatConfig, withAgent } = await nodeAgentSuite();

const MODEL = 'gemini-3-flash-preview';
const endpoint = () => `${mock.base}/chat/completions`;
const cfg = (o: Partial<AgentConfig> = {}): AgentConfig => chatConfig(MODEL, o);

const sig = (n: string) => ({ google: { thought_signature: `CiQB${n}vX1dHtim827fQ==` } });

/** The calls of each round, as the server makes them: the first of parallel calls signed, a single call signed. */
const ROUNDS: O.CallIn[][] = [
  [
    { id: 'fc_a1', name: 'echo', args: { text: 'a' }, extra: sig('1') },
    { id: 'fc_b2', name: 'echo', args: { text: 'b' } },
  ],
  [{ id: 'fc_c3', name: 'echo', args: { text: 'c' }, extra: sig('2') }],
];
/** What each call id came with (absent: nothing). */
const ISSUED = new Map(ROUNDS.flat().map((c) => [c.id!, c.extra]));

type Mode = 'whole' | 'streamed' | 'streamed, signature late';
const MODES: Mode[] = ['whole', 'streamed', 'streamed, signature late'];

function calls(mode: Mode, round: O.CallIn[]): Reply {
  if (mode === 'whole') return O.toolCalls(round, { finish: 'stop' });
  return O.streamCalls(round, { extraLate: mode !== 'streamed' });
}
function answer(mode: Mode, text: string): Reply {
  return mode === 'whole' ? O.text(text, { extra: sig('3') }) : O.streamText([text], { extra: sig('3'), extraLast: true });
}
const replies = (mode: Mode): Reply[] => [...ROUNDS.map((r) => calls(mode, r)), answer(mode, 'All done.')];

/** Gemini's answer when a call of the current turn comes back without its signature. */
const GEMINI_400 = (name: string): Reply => ({
  status: 400,
  body: [
    {
      error: {
        code: 400,
        message: `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
        status: 'INVALID_ARGUMENT',
      },
    },
  ],
});

/** The assistant messages of a request that made tool calls. */
const callers = (req: RecordedRequest): any[] => req.json.messages.filter((m: any) => m.role === 'assistant' && m.tool_calls);

/**
 * A Gemini-like server: `replies` in order, but a request in which one of the calls it made
 * comes back without the extra_content it came with (or with another) gets Gemini's 400.
 */
function gemini(rs: Reply[]): (req: RecordedRequest) => Reply {
  let next = 0;
  return (req) => {
    for (const m of callers(req))
      for (const c of m.tool_calls) {
        if (JSON.stringify(c.extra_content) !== JSON.stringify(ISSUED.get(c.id))) return GEMINI_400(c.function.name);
      }
    return rs[next++] ?? O.text('ok');
  };
}

const part = (n: string, call?: number, model = MODEL) => ({
  dialect: 'openai',
  type: 'extra_content',
  value: sig(n),
  origin: `${model}@${endpoint()}`,
  ...(call === undefined ? {} : { call }),
});
const since = (mark: number) => logLines.slice(mark).join('\n');

for (const mode of MODES) {
  test(`gemini-like ${mode}: each call's signature goes back on that call, the loop completes, the answer's goes back on it`, async () => {
    await withAgent(cfg({ stream: mode !== 'whole' }), async (a) => {
      mock.script(gemini(replies(mode)));
      const r = await a.run('echo a and b, then c');
      assert.equal(r.status, 0, r.error);
      assert.equal(r.text, 'All done.');
      assert.equal(mock.posts.length, 3, 'no request was refused');
      assert.deepEqual(
        a.messages.filter((m) => m.role === 'tool').map((m) => m.content),
        ['echo:a', 'echo:b', 'echo:c'],
        'two parallel calls, not one',
      );
      assert.match(
        mock.posts[1]!.body,
        /"tool_calls":\[\{"id":"fc_a1","type":"function","function":\{"name":"echo","arguments":"\{\\"text\\":\\"a\\"\}"\},"extra_content":\{"google":\{"thought_signature":"CiQB1vX1dHtim827fQ=="\}\}\},\{"id":"fc_b2","type":"function","function":\{"name":"echo","arguments":"\{\\"text\\":\\"b\\"\}"\}\}\]/,
        'on the call it came on, verbatim; the second call carries none',
      );
      assert.deepEqual(
        callers(mock.posts[2]!).flatMap((m) => m.tool_calls.map((c: any) => c.extra_content)),
        [sig('1'), undefined, sig('2')],
        'every earlier round still carries its own',
      );
      const kept = a.messages.filter((m) => m.role === 'assistant').map((m) => (m as { reasoning?: unknown }).reasoning);
      assert.deepEqual(kept, [[part('1', 0)], [part('2', 0)], [part('3')]]);
      mock.script(gemini([O.text('bye')]));
      assert.equal((await a.run('thanks')).status, 0);
      assert.deepEqual(mock.posts.at(-1)!.json.messages.at(-2), {
        role: 'assistant',
        content: 'All done.',
        extra_content: sig('3'),
      });
    });
  });
}

test('without the signatures the Gemini-like server refuses the loop with its 400; the request goes again with that round as text', async () => {
  await withAgent(cfg(), async (a) => {
    // The history of a first round as a client that drops extra_content would keep it.
    a.restoreHistory([
      { role: 'user', content: 'echo a and b, then c' },
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'fc_a1', name: 'echo', args: '{"text":"a"}' },
          { id: 'fc_b2', name: 'echo', args: '{"text":"b"}' },
        ],
      },
      { role: 'tool', content: 'echo:a', toolCallId: 'fc_a1', toolName: 'echo' },
      { role: 'tool', content: 'echo:b', toolCallId: 'fc_b2', toolName: 'echo' },
    ]);
    mock.script(gemini([]));
    const r = await a.run('go on');
    assert.equal(r.status, 0, r.error);
    assert.equal(mock.posts.length, 2, 'refused once, then sent again');
    assert.match(mock.posts[0]!.body, /"tool_calls"/);
    assert.doesNotMatch(mock.posts[1]!.body, /"tool_calls"|"role":"tool"/, 'not a refusal of a field: the round goes as text');
    assert.match(mock.posts[1]!.body, /\[tool call echo \{\\"text\\":\\"a\\"\}\]/);
  });
});

test('a switch to another model drops the signatures and logs so; a restored history sends them only on their own server and model', async () => {
  let saved: Message[] = [];
  await withAgent(cfg(), async (a) => {
    mock.script(gemini(replies('whole')));
    assert.equal((await a.run('echo a and b, then c')).status, 0);
    saved = a.messages;
    const mark = logLines.length;
    a.setProvider(cfg({ model: 'gemini-3-pro-preview' }));
    assert.match(
      since(mark),
      new RegExp(
        `^dropped 3 reasoning parts of another server or model: openai requests to gemini-3-pro-preview at ${endpoint()} cannot carry them$`,
        'm',
      ),
    );
    mock.script(() => O.text('ok'));
    assert.equal((await a.run('next')).status, 0);
    assert.doesNotMatch(mock.posts.at(-1)!.body, /extra_content|thought_signature/, 'none of it is sent');
    assert.match(mock.posts.at(-1)!.body, /echo:c/, 'the rest of the conversation goes on');
  });

  await withAgent(cfg({ model: 'gemini-3-pro-preview' }), async (b) => {
    const mark = logLines.length;
    b.restoreHistory(saved.map((m) => parseMessageJson(JSON.parse(JSON.stringify(messageToJson(m))))));
    assert.match(
      since(mark),
      new RegExp(
        `^the restored history holds 3 reasoning parts of another server or model; openai requests to gemini-3-pro-preview at ${endpoint()} do not carry them$`,
        'm',
      ),
    );
    mock.script(() => O.text('ok'));
    assert.equal((await b.run('next')).status, 0);
    assert.doesNotMatch(mock.posts.at(-1)!.body, /extra_content/);
    b.setProvider(cfg());
    mock.script(gemini([O.text('again')]));
    assert.equal((await b.run('again')).status, 0);
    assert.equal(mock.posts.length, 2, 'back on its model: accepted at once');
    assert.deepEqual(
      callers(mock.posts.at(-1)!).flatMap((m) => m.tool_calls.map((c: any) => c.extra_content)),
      [sig('1'), undefined, sig('2')],
    );
  });
});

for (const mode of MODES) {
  test(`a history saved as message JSON mid tool loop and restored goes on carrying the signatures (${mode})`, async () => {
    let saved: unknown[] = [];
    await withAgent(cfg({ stream: mode !== 'whole', maxIterations: 1 }), async (a) => {
      mock.script(gemini(replies(mode)));
      const r = await a.run('echo a and b, then c');
      assert.equal(r.status, E2BIG, 'stopped after one round');
      saved = JSON.parse(JSON.stringify(a.messages.map(messageToJson)));
    });
    assert.deepEqual((saved[2] as { reasoning?: unknown }).reasoning, [part('1', 0)], 'the session form keeps the part');
    await withAgent(cfg({ stream: mode !== 'whole' }), async (b) => {
      b.restoreHistory(saved.map((j) => parseMessageJson(j)));
      mock.script(gemini(replies(mode).slice(1)));
      const r = await b.run('go on');
      assert.equal(r.status, 0, r.error);
      assert.equal(r.text, 'All done.');
      assert.equal(mock.posts.length, 2, 'no request was refused');
    });
  });
}

test('a server that refuses extra_content: the parts are dropped, the request goes once more without them, and the turn completes', async () => {
  await withAgent(cfg(), async (a) => {
    let next = 0;
    const rs = replies('whole');
    mock.script((req) =>
      /extra_content/.test(req.body)
        ? {
            status: 400,
            body: [
              {
                error: {
                  code: 400,
                  message: `Invalid JSON payload received. Unknown name "extra_content" at 'messages[2].tool_calls[0]': Cannot find field.`,
                  status: 'INVALID_ARGUMENT',
                },
              },
            ],
          }
        : rs[next++]!,
    );
    const mark = logLines.length;
    const r = await a.run('echo a and b, then c');
    assert.equal(r.status, 0, r.error);
    assert.equal(r.text, 'All done.');
    assert.deepEqual(
      mock.posts.map((p) => /extra_content/.test(p.body)),
      [false, true, false, false],
      'sent once with it, again without it, and not again on this connection',
    );
    assert.match(
      since(mark),
      /^the server refused the reasoning sent back \(HTTP 400: Invalid JSON payload received\. Unknown name "extra_content" at 'messages\[2\]\.tool_calls\[0\]': Cannot find field\.\); sending the request again without it \(1 dropped\)$/m,
    );
    assert.ok(
      a.messages.every((m) => m.role !== 'assistant' || m.reasoning === undefined),
      'the history holds none of it',
    );
  });
});
