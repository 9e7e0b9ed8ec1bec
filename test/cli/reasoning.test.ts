// The real `clm` binary with reasoning models: a session killed mid tool loop and resumed carries
// the signed thinking / encrypted reasoning back (Anthropic and Responses, streamed and not); a
// DeepSeek-like server gets its reasoning_content back through a tool loop and a resume, a
// Gemini-like one each call's extra_content (its thought signature); the
// reasoning effort from config.lua (per model, per profile) and --reasoning-effort reaches each
// dialect's request; a resume on another dialect sends none of it and says so in the debug log;
// reasoning is shown dim on stderr and as stream-json `reasoning` events, never as the reply.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as A from '../fixtures/anthropic-replies.js';
import * as O from '../fixtures/openai-replies.js';
import * as R from '../fixtures/responses-replies.js';
import { show, waitFor } from '../fixtures/run-cli.js';
import { cliSuite, jsonLines, sessionIdOf } from '../fixtures/cli-suite.js';

const { mock, dirs, run, spawn } = await cliSuite({
  dirs: 'each',
  args: (_mock, d) => ['-p', d.empty],
  setup: (d) => writeFileSync(join(d.root, 'notes.txt'), 'the notes'),
});

const sessionFiles = () => {
  try {
    return readdirSync(dirs.sessions).filter((f) => f.endsWith('.jsonl'));
  } catch {
    return [];
  }
};
const sessionText = () => (sessionFiles().length ? readFileSync(join(dirs.sessions, sessionFiles()[0]!), 'utf8') : '');

/** config.lua with provider `mock` of this kind (and `other` of the other dialect) on the mock. */
function config(kind: string, extra = ''): void {
  const other = kind === 'anthropic' ? 'openai-responses' : 'anthropic';
  dirs.write(
    'config.lua',
    `return {
  model = "mock/m1",
  providers = {
    mock = { kind = "${kind}", url = "${mock.base}", models = { m2 = { reasoning_effort = "high" } } },
    other = { kind = "${other}", url = "${mock.base}" },
    chat = { url = "${mock.base}" },
  },
  agents = { quick = { reasoning_effort = "low" } },
  ${extra}
}
`,
  );
}

const readNotes = { path: 'notes.txt' };
const th = (n: string) => ({ type: 'thinking' as const, thinking: `thinking ${n}`, signature: `sig-${n}==` });

for (const kind of ['anthropic', 'openai-responses'] as const) {
  for (const stream of [false, true]) {
    const mode = stream ? 'streamed' : 'whole';
    const flags = stream ? [] : ['-S'];
    const reply =
      kind === 'anthropic'
        ? (b: A.BlockIn[]) => (stream ? A.streamBlocks(b) : A.replyBlocks(b))
        : (i: R.ItemIn[]) => (stream ? R.streamItems(i) : R.replyItems(i));

    test(`${kind} ${mode}: a session killed mid tool loop resumes with its reasoning, and the loop goes on carrying it`, async () => {
      config(kind);
      const rs = (n: string): R.ItemIn => ({ type: 'reasoning', id: `rs_${n}`, summary: [`summary ${n}`], encrypted: `ENC-${n}` });
      const call = (id: string): R.ItemIn => ({
        type: 'function_call',
        call_id: id,
        name: 'read_file',
        arguments: JSON.stringify(readNotes),
      });
      if (kind === 'anthropic')
        mock.push(
          (reply as (b: A.BlockIn[]) => any)([
            th('1'),
            { type: 'text', text: 'Reading.' },
            { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: readNotes },
          ]),
        );
      else mock.push((reply as (i: R.ItemIn[]) => any)([rs('1'), { type: 'message', text: 'Reading.' }, call('call_1')]));
      mock.push({ hang: true });
      const c = spawn([...flags, '-o', 'read the notes']);
      await waitFor(() => mock.posts.length === 2, 'the second request of the loop');
      await waitFor(() => sessionText().includes('"tool_call_id"'), 'the tool result in the session log');
      c.child.kill('SIGKILL');
      assert.equal((await c.result).signal, 'SIGKILL');
      const id = sessionFiles()[0]!.replace(/\.jsonl$/, '');

      // In the session file: the assistant line with its reasoning, as the provider sent it.
      const asst = sessionText()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((l) => l.role === 'assistant');
      const wantPart =
        kind === 'anthropic'
          ? { dialect: 'anthropic', type: 'thinking', thinking: 'thinking 1', signature: 'sig-1==' }
          : { dialect: 'openai-responses', type: 'reasoning', item: R.outputItem(rs('1'), 0) };
      assert.deepEqual(asst.reasoning, [wantPart]);
      assert.equal(asst.content, 'Reading.', 'reasoning is not the reply text');

      mock.reset();
      if (kind === 'anthropic') {
        mock.push((reply as (b: A.BlockIn[]) => any)([th('2'), { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: readNotes }]));
        mock.push((reply as (b: A.BlockIn[]) => any)([th('3'), { type: 'text', text: 'The notes say hi.' }]));
      } else {
        mock.push((reply as (i: R.ItemIn[]) => any)([rs('2'), call('call_2')]));
        mock.push((reply as (i: R.ItemIn[]) => any)([rs('3'), { type: 'message', text: 'The notes say hi.' }]));
      }
      const r = await run([...flags, '-r', id, '-o', 'go on']);
      assert.equal(r.code, 0, show(r));
      assert.equal(r.stdout, 'The notes say hi.\n');
      assert.equal(sessionIdOf(r), id);
      const [first, second] = mock.posts.map((p) => p.json);
      if (kind === 'anthropic') {
        const turns = first.messages;
        assert.deepEqual(turns[1], {
          role: 'assistant',
          content: [th('1'), { type: 'text', text: 'Reading.' }, { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: readNotes }],
        });
        assert.equal(turns[2].content[0].type, 'tool_result');
        assert.deepEqual(turns[2].content.at(-1), { type: 'text', text: 'go on' });
        assert.deepEqual(second.messages[1], turns[1], 'still carried in the next round');
        assert.deepEqual(second.messages[3].content[0], th('2'));
      } else {
        const input = first.input;
        const at = input.findIndex((i: any) => i.type === 'reasoning');
        assert.deepEqual(
          input.slice(at, at + 3).map((i: any) => i.type ?? i.role),
          ['reasoning', 'assistant', 'function_call'],
        );
        assert.deepEqual(input[at], R.outputItem(rs('1'), 0));
        assert.deepEqual(first.include, ['reasoning.encrypted_content']);
        assert.deepEqual(
          second.input.filter((i: any) => i.type === 'reasoning').map((i: any) => i.encrypted_content),
          ['ENC-1', 'ENC-2'],
        );
      }
    });
  }
}

for (const stream of [false, true]) {
  test(`openai chat ${stream ? 'streamed' : 'whole'}: a DeepSeek-like tool loop carries reasoning_content back, and a resumed session goes on carrying it`, async () => {
    config('openai');
    const flags = stream ? [] : ['-S'];
    const thoughts: Record<string, string> = { call_1: 'Read the notes first.', call_2: 'Once more.' };
    const args = JSON.stringify(readNotes);
    const call = (id: string) =>
      stream
        ? O.streamToolCall('read_file', args, id, { reasoning: [thoughts[id]!] })
        : O.toolCall('read_file', args, id, { reasoning: thoughts[id]! });
    const answer = (t: string) => (stream ? O.streamText([t], { reasoning: ['So.'] }) : O.text(t, { reasoning: 'So.' }));
    // DeepSeek in thinking mode: a tool loop whose reasoning_content did not come back is refused.
    const deepseek = (replies: ReturnType<typeof call>[]) => {
      let next = 0;
      mock.script((req) => {
        for (const m of req.json.messages)
          if (m.role === 'assistant' && m.tool_calls && m.reasoning_content !== thoughts[m.tool_calls[0].id])
            return {
              status: 400,
              body: {
                error: {
                  message: 'The reasoning_content in the thinking mode must be passed back to the API.',
                  type: 'invalid_request_error',
                },
              },
            };
        return replies[next++]!;
      });
    };
    deepseek([call('call_1'), answer('The notes say hi.')]);
    const r1 = await run([...flags, '-o', 'read the notes']);
    assert.equal(r1.code, 0, show(r1));
    assert.equal(r1.stdout, 'The notes say hi.\n');
    assert.equal(mock.posts.length, 2, 'no request was refused');
    assert.match(r1.stderr, /Read the notes first\./, 'the reasoning is shown');
    const asst = sessionText()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((l) => l.role === 'assistant');
    assert.deepEqual(asst[0].reasoning, [
      {
        dialect: 'openai',
        type: 'reasoning_text',
        field: 'reasoning_content',
        text: 'Read the notes first.',
        origin: `m1@${mock.base}/chat/completions`,
      },
    ]);
    const id = sessionIdOf(r1);

    mock.reset();
    deepseek([call('call_2'), answer('Still hi.')]);
    const r2 = await run([...flags, '-r', id, '-o', 'read them again']);
    assert.equal(r2.code, 0, show(r2));
    assert.equal(r2.stdout, 'Still hi.\n');
    assert.equal(mock.posts.length, 2, 'no request was refused');
    assert.deepEqual(
      mock.posts[1]!.json.messages.filter((m: any) => m.tool_calls).map((m: any) => m.reasoning_content),
      ['Read the notes first.', 'Once more.'],
    );
  });
}

for (const stream of [false, true]) {
  test(`openai chat ${stream ? 'streamed' : 'whole'}: a Gemini-like tool loop carries each call's extra_content back on it, and a resumed session goes on carrying it`, async () => {
    config('openai');
    const flags = stream ? [] : ['-S'];
    const sig = (n: string) => ({ google: { thought_signature: `CiQB-${n}==` } });
    // Parallel calls: only the first is signed. Gemini streams each call whole, without index.
    const round = (n: string): O.CallIn[] => [
      { id: `fc_${n}1`, name: 'read_file', args: readNotes, extra: sig(n) },
      { id: `fc_${n}2`, name: 'read_file', args: readNotes },
    ];
    const calls = (n: string) => (stream ? O.streamCalls(round(n)) : O.toolCalls(round(n)));
    const answer = (t: string) => (stream ? O.streamText([t], { extra: sig('t'), extraLast: true }) : O.text(t, { extra: sig('t') }));
    const issued = new Map(['1', '2'].flatMap((n) => round(n).map((c) => [c.id!, c.extra])));
    const gemini = (replies: ReturnType<typeof calls>[]) => {
      let next = 0;
      mock.script((req) => {
        for (const m of req.json.messages)
          for (const c of m.tool_calls ?? [])
            if (JSON.stringify(c.extra_content) !== JSON.stringify(issued.get(c.id)))
              return {
                status: 400,
                body: [
                  {
                    error: {
                      code: 400,
                      message:
                        'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:read_file` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.',
                      status: 'INVALID_ARGUMENT',
                    },
                  },
                ],
              };
        return replies[next++]!;
      });
    };
    gemini([calls('1'), answer('The notes say hi.')]);
    const r1 = await run([...flags, '-o', 'read the notes']);
    assert.equal(r1.code, 0, show(r1));
    assert.equal(r1.stdout, 'The notes say hi.\n');
    assert.equal(mock.posts.length, 2, 'no request was refused');
    const asst = sessionText()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((l) => l.role === 'assistant');
    const origin = `m1@${mock.base}/chat/completions`;
    assert.deepEqual(asst[0].reasoning, [{ dialect: 'openai', type: 'extra_content', value: sig('1'), origin, call: 0 }]);
    assert.deepEqual(asst[1].reasoning, [{ dialect: 'openai', type: 'extra_content', value: sig('t'), origin }]);
    const id = sessionIdOf(r1);

    mock.reset();
    gemini([calls('2'), answer('Still hi.')]);
    const r2 = await run([...flags, '-r', id, '-o', 'read them again']);
    assert.equal(r2.code, 0, show(r2));
    assert.equal(r2.stdout, 'Still hi.\n');
    assert.equal(mock.posts.length, 2, 'no request was refused');
    const last = mock.posts[1]!.json.messages;
    assert.deepEqual(
      last.filter((m: any) => m.tool_calls).map((m: any) => m.tool_calls.map((c: any) => c.extra_content)),
      [
        [sig('1'), undefined],
        [sig('2'), undefined],
      ],
    );
    assert.deepEqual(last.find((m: any) => m.content === 'The notes say hi.').extra_content, sig('t'), "the answer's own, on the message");
  });
}

test('the reasoning effort per model, per profile and from --reasoning-effort reaches each dialect', async () => {
  config('anthropic');
  const runWith = async (args: string[], replyFn: () => any) => {
    mock.reset();
    mock.push(replyFn());
    const r = await run(['-S', ...args, '-o', 'hi']);
    assert.equal(r.code, 0, show(r));
    return mock.posts[0]!.json;
  };
  const a = () => A.text('ok');
  assert.equal((await runWith([], a)).thinking, undefined, 'none configured: no parameter');
  let body = await runWith(['-m', 'mock/m2'], a);
  assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 24000 }, "the model's high");
  assert.equal(body.max_tokens, 64000);
  assert.deepEqual(
    (await runWith(['-m', 'mock/m2', '-a', 'quick'], a)).thinking,
    { type: 'enabled', budget_tokens: 4000 },
    'the profile wins',
  );
  assert.deepEqual(
    (await runWith(['-m', 'mock/m2', '--reasoning-effort', 'medium'], a)).thinking,
    { type: 'enabled', budget_tokens: 10000 },
    'the flag wins',
  );
  assert.equal((await runWith(['-m', 'mock/m2', '--reasoning-effort', 'off'], a)).thinking, undefined);
  body = await runWith(['-m', 'other/x', '--reasoning-effort', 'high'], () => R.text('ok'));
  assert.deepEqual(body.reasoning, { effort: 'high', summary: 'auto' });
  assert.deepEqual(body.include, ['reasoning.encrypted_content']);
  assert.equal((await runWith(['-m', 'chat/x', '--reasoning-effort', 'low'], () => O.text('ok'))).reasoning_effort, 'low');
  const bad = await run(['-S', '--reasoning-effort', 'max', '-o', 'hi']);
  assert.equal(bad.code, 2, show(bad));
  assert.match(bad.stderr, /--reasoning-effort: unknown level 'max' \(low, medium, high, off\)/);
});

test('a session resumed on another dialect sends none of its reasoning, and the debug log says so', async () => {
  config('anthropic');
  mock.push(A.replyBlocks([th('1'), { type: 'text', text: 'Hello.' }]));
  const r1 = await run(['-S', '-o', 'hi']);
  assert.equal(r1.code, 0, show(r1));
  const id = sessionIdOf(r1);
  mock.reset();
  mock.push(R.text('hi again'));
  const log = join(dirs.root, 'debug.log');
  const r2 = await run(['-S', '-m', 'other/x', '-r', id, '-o', 'again'], { env: { CLM_DEBUG_LOG: log } });
  assert.equal(r2.code, 0, show(r2));
  const body = mock.posts[0]!.body;
  assert.doesNotMatch(body, /sig-1|"thinking"|"reasoning"|"include"/);
  assert.match(body, /Hello\./);
  assert.match(
    readFileSync(log, 'utf8'),
    /the restored history holds 1 reasoning part of another dialect; openai-responses requests do not carry them/,
  );
});

test('reasoning shows dim on stderr and as stream-json reasoning events, never as the reply', async () => {
  config('anthropic');
  const blocks: A.BlockIn[] = [th('1'), { type: 'redacted_thinking', data: 'RD' }, { type: 'text', text: 'The answer.' }];
  mock.push(A.streamBlocks(blocks));
  const text = await run(['-o', 'q']);
  assert.equal(text.code, 0, show(text));
  assert.equal(text.stdout, 'The answer.\n');
  assert.match(text.stderr, /thinking 1/);
  mock.push(A.streamBlocks(blocks));
  const sj = await run(['--output-format', 'stream-json', '-o', 'q']);
  assert.equal(sj.code, 0, show(sj));
  const lines = jsonLines(sj.stdout);
  assert.equal(
    lines
      .filter((l) => l.type === 'reasoning')
      .map((l) => l.text)
      .join(''),
    'thinking 1',
  );
  assert.equal(
    lines
      .filter((l) => l.type === 'text')
      .map((l) => l.text)
      .join(''),
    'The answer.',
  );
  assert.equal(lines.at(-1)!.result, 'The answer.');
  assert.doesNotMatch(sj.stdout, /sig-1|RD/, 'signatures and encrypted data are not output');
  mock.push(A.replyBlocks(blocks));
  const j = await run(['-S', '--output-format', 'json', '-o', 'q']);
  assert.equal(JSON.parse(j.stdout).result, 'The answer.');
});

test('the session log masks secrets in reasoning: signed thinking holding one is left out, summaries and chat reasoning text are masked, encrypted data stays', async () => {
  const KEY = 'sk-live-secret-7777';
  config('anthropic');
  mock.push(
    A.replyBlocks([{ type: 'thinking', thinking: `the key is ${KEY}`, signature: 'sig-x' }, th('2'), { type: 'text', text: 'Done.' }]),
  );
  const r1 = await run(['-S', '-o', 'hi'], { env: { CLM_API_KEY: KEY } });
  assert.equal(r1.code, 0, show(r1));
  let text = sessionText();
  assert.ok(!text.includes(KEY));
  assert.deepEqual(
    text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.role === 'assistant').reasoning,
    [{ dialect: 'anthropic', type: 'thinking', thinking: 'thinking 2', signature: 'sig-2==' }],
    'a masked thinking block would no longer match its signature',
  );
  for (const f of sessionFiles()) writeFileSync(join(dirs.sessions, f), '');
  config('openai-responses');
  mock.reset();
  mock.push(
    R.replyItems([
      { type: 'reasoning', id: 'rs_k', summary: [`saw ${KEY}`], encrypted: 'ENC-K' },
      { type: 'message', text: 'Done.' },
    ]),
  );
  const r2 = await run(['-S', '-o', 'hi'], { env: { CLM_API_KEY: KEY } });
  assert.equal(r2.code, 0, show(r2));
  text = readFileSync(join(dirs.sessions, `${sessionIdOf(r2)}.jsonl`), 'utf8');
  assert.ok(!text.includes(KEY));
  const item = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((l) => l.role === 'assistant').reasoning[0].item;
  assert.equal(item.encrypted_content, 'ENC-K');
  assert.doesNotMatch(item.summary[0].text, /sk-live/);

  // Chat reasoning text is unsigned: masked, it is kept.
  for (const f of sessionFiles()) writeFileSync(join(dirs.sessions, f), '');
  config('openai');
  mock.reset();
  mock.push(O.text('Done.', { reasoning: `saw ${KEY} here` }));
  const r3 = await run(['-S', '-o', 'hi'], { env: { CLM_API_KEY: KEY } });
  assert.equal(r3.code, 0, show(r3));
  text = readFileSync(join(dirs.sessions, `${sessionIdOf(r3)}.jsonl`), 'utf8');
  assert.ok(!text.includes(KEY));
  const part = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((l) => l.role === 'assistant').reasoning[0];
  assert.equal(part.type, 'reasoning_text');
  assert.match(part.text, /^saw \S+ here$/);
});
