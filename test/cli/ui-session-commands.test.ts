// `/fork` and `/usage` over the real runtime and the loopback mock LLM: a fork goes on in a copy
// under a new id while the original file stays as it was; usage per turn and for the run, with
// the cached input apart and the cost from the configured prices.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as O from '../fixtures/openai-replies.js';
import { runtimeSuite } from '../fixtures/command-context.js';
import { runCommand } from '../../src/cli/ui/commands.js';

const s = runtimeSuite();

const sessionFile = (id: string) => join(s.dirs.sessions, `${id}.jsonl`);
const records = (id: string) =>
  readFileSync(sessionFile(id), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);

test('/fork: the conversation goes on in a copy under a new id; the original file stays as it was', async () => {
  const { rt, ctx, printed } = await s.start(['-u', s.mock.base]);
  await runCommand('/fork', ctx);
  assert.deepEqual(printed.at(-1), { text: 'cannot fork: nothing to fork yet: the conversation is empty', kind: 'error' });
  s.mock.push(O.text('first answer'));
  assert.equal((await rt.agent.run('first question')).status, 0);
  const from = rt.session!.id;
  const before = readFileSync(sessionFile(from), 'utf8');
  assert.equal(await runCommand('/fork', ctx), true);
  const to = rt.session!.id;
  assert.notEqual(to, from);
  assert.deepEqual(printed.at(-1), {
    text: `[forked session ${from} as ${to}; ${from} stays as it was, resume it with clm -r ${from}]`,
    kind: 'notice',
  });
  s.mock.push(O.text('second answer'));
  assert.equal((await rt.agent.run('only in the fork')).status, 0);
  assert.equal(readFileSync(sessionFile(from), 'utf8'), before, 'the original is untouched');
  const fork = records(to);
  assert.equal(fork[0]!.forked_from, from);
  assert.deepEqual(
    fork.slice(1).map((m) => `${m.role}:${m.content}`),
    ['user:first question', 'assistant:first answer', 'user:only in the fork', 'assistant:second answer'],
  );
  assert.deepEqual(
    readdirSync(s.dirs.sessions)
      .filter((f) => f.endsWith('.jsonl'))
      .sort(),
    [`${from}.jsonl`, `${to}.jsonl`].sort(),
  );
  await runCommand('/fork now', ctx);
  assert.deepEqual(printed.at(-1), { text: 'usage: /fork', kind: 'error' });
});

test('/fork while a turn runs is refused', async () => {
  const { ctx, printed } = await s.start(['-u', s.mock.base]);
  ctx.busy = () => true;
  await runCommand('/fork', ctx);
  assert.deepEqual(printed.at(-1), { text: 'busy; try again when idle', kind: 'error' });
});

test('/usage: tokens per turn and for the run as the server reported them, cached apart, the cost from the price', async () => {
  s.dirs.write(
    'config.lua',
    `return { model = "p/m", providers = { p = { url = "${s.mock.base}", price = { input = 3, output = 15 },
      models = { m = { price = { input = 2, output = 10, cached_input = 0.5 } } } } } }\n`,
  );
  const { rt, ctx, printed } = await s.start([]);
  await runCommand('/usage', ctx);
  assert.match(printed.at(-1)!.text, /no turn yet has reported its tokens/);
  // One turn of two requests (a tool call, then the answer), then a turn of one.
  s.mock.push(
    O.toolCall('list_dir', { path: s.dirs.root }, 'c1', { usage: { prompt: 1000, completion: 100, cached: 400 } }),
    O.text('listed', { usage: { prompt: 1200, completion: 50, cached: 1000 } }),
    O.text('again', { usage: { prompt: 2000, completion: 20 } }),
  );
  assert.equal((await rt.agent.run('list it')).status, 0);
  assert.equal((await rt.agent.run('and again')).status, 0);
  await runCommand('/usage', ctx);
  const text = printed.at(-1)!.text;
  const lines = text.split('\n');
  assert.match(lines[0]!, /^usage of this run/);
  assert.deepEqual(lines[1]!.trim().split(/\s+/), ['turn', 'model', 'in', 'cached', 'out', 'cost']);
  // Turn 1: 2200 in (1400 cached), 150 out: (800*2 + 1400*0.5 + 150*10) / 1e6 = $0.0038.
  assert.deepEqual(lines[2]!.trim().split(/\s+/), ['1', 'm', '2200', '1400', '150', '$0.0038']);
  // Turn 2: (2000*2 + 20*10) / 1e6 = $0.0042.
  assert.deepEqual(lines[3]!.trim().split(/\s+/), ['2', 'm', '2000', '0', '20', '$0.0042']);
  assert.deepEqual(lines[4]!.trim().split(/\s+/), ['session', '4200', '1400', '170', '$0.0080']);
  assert.equal(lines.length, 5, text);
  assert.equal(rt.usage.totals().reported, 2);
});

test('/usage without a price shows tokens only and says how to set one', async () => {
  const { rt, ctx, printed } = await s.start(['-u', s.mock.base]);
  s.mock.push(O.text('hi', { usage: { prompt: 10, completion: 2 } }));
  assert.equal((await rt.agent.run('hello')).status, 0);
  await runCommand('/cost', ctx);
  const lines = printed.at(-1)!.text.split('\n');
  assert.deepEqual(lines[1]!.trim().split(/\s+/), ['turn', 'model', 'in', 'cached', 'out']);
  assert.deepEqual(lines[2]!.trim().split(/\s+/).slice(2), ['10', '0', '2']);
  assert.match(lines.at(-1)!, /no price configured: set price = \{ input = N, output = N \}/);
});
