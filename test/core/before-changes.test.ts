// AgentOptions.beforeChanges: awaited before a round with a call that may change files, before
// any call of it runs; not for rounds of read-only tools alone; a cancel while it runs ends the
// turn with every call paired; a failing hook is a notice and the round goes on.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockLlmPerFile } from '../fixtures/mock-llm-per-file.js';
import * as oa from '../fixtures/openai-replies.js';
import { echoTool, harness } from '../fixtures/agent-harness.js';
import { ECANCELED } from '../../src/core/errors.js';

const mock = await mockLlmPerFile();

test('the hook runs before the first call of a round that may change files, and the calls wait for it', async () => {
  mock.push(
    oa.toolCalls([
      { name: 'reader', args: {} },
      { name: 'writer', args: {} },
    ]),
    oa.text('done'),
  );
  const order: string[] = [];
  const r = harness(mock, {
    permission: 'allow_once',
    tools: [
      echoTool('reader', 'r', {
        readOnly: true,
        noPrompt: true,
        invoke: (inv) => {
          order.push('reader');
          inv.complete('r');
        },
      }),
      echoTool('writer', 'w', {
        invoke: (inv) => {
          order.push('writer');
          inv.complete('w');
        },
      }),
    ],
    options: {
      beforeChanges: async () => {
        order.push('hook start');
        await new Promise((res) => setTimeout(res, 30));
        order.push('hook end');
      },
    },
  });
  assert.equal((await r.agent.run('go')).status, 0);
  assert.deepEqual(order, ['hook start', 'hook end', 'reader', 'writer']);
});

test('a round of read-only tools alone does not call the hook', async () => {
  mock.push(oa.toolCall('reader', {}), oa.text('done'));
  let calls = 0;
  const r = harness(mock, {
    tools: [echoTool('reader', 'r', { readOnly: true, noPrompt: true })],
    options: {
      beforeChanges: async () => {
        calls++;
      },
    },
  });
  assert.equal((await r.agent.run('go')).status, 0);
  assert.equal(calls, 0);
  assert.deepEqual(
    r.results.map((x) => x.content),
    ['r'],
  );
});

test('a cancel while the hook runs ends the turn; the calls get results and none runs', async () => {
  mock.push(oa.toolCall('writer', {}), oa.text('never'));
  let ran = 0;
  let entered!: () => void;
  const inHook = new Promise<void>((res) => {
    entered = res;
  });
  const r = harness(mock, {
    permission: 'allow_once',
    tools: [
      echoTool('writer', 'w', {
        invoke: (inv) => {
          ran++;
          inv.complete('w');
        },
      }),
    ],
    options: {
      beforeChanges: () => {
        entered();
        return new Promise<void>(() => {}); // never settles: only the cancel ends the wait
      },
    },
  });
  const done = r.agent.run('go');
  await inHook;
  r.agent.cancel();
  assert.equal((await done).status, ECANCELED);
  assert.equal(ran, 0);
  const calls = r.agent.messages.filter((m) => m.role === 'assistant' && m.toolCalls?.length).length;
  const results = r.agent.messages.filter((m) => m.role === 'tool').length;
  assert.equal(calls, 1);
  assert.equal(results, 1);
});

test('a failing hook is reported as a notice and the round goes on', async () => {
  mock.push(oa.toolCall('writer', {}), oa.text('done'));
  const r = harness(mock, {
    permission: 'allow_once',
    tools: [echoTool('writer', 'w')],
    options: {
      beforeChanges: async () => {
        throw new Error('snapshot broke');
      },
    },
  });
  assert.equal((await r.agent.run('go')).status, 0);
  assert.ok(
    r.notices.some((n) => n.includes('snapshot broke')),
    r.notices.join('\n'),
  );
  assert.deepEqual(
    r.results.map((x) => x.content),
    ['w'],
  );
});
