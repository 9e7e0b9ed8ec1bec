// The tool batch through the agent: permission answers, timeouts that still report output,
// tools that fail asynchronously — each call gets exactly one result with the right outcome.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockLlmPerFile } from '../fixtures/mock-llm-per-file.js';
import * as oa from '../fixtures/openai-replies.js';
import { harness, recordingHost } from '../fixtures/agent-harness.js';
import type { PermissionRequest } from '../../src/core/types.js';
import { notRunOf } from '../../src/core/tool-batch.js';

const mock = await mockLlmPerFile();

test('a permission answered twice runs the tool once; the second answer is ignored', async () => {
  mock.push(oa.toolCall('gated', {}), oa.text('ok'));
  let runs = 0;
  const r = harness(mock, {
    // The tool finishes later, so a second answer arrives while it still runs.
    tools: [
      {
        name: 'gated',
        invoke: (inv) => {
          runs++;
          setTimeout(() => inv.complete('ran'), 5);
        },
      },
    ],
    callbacks: {
      onPermission: (req: PermissionRequest) => {
        req.respond('allow_once');
        req.respond('allow_once');
        req.respond('deny_once');
      },
    },
  });
  assert.equal((await r.agent.run('go')).status, 0);
  assert.equal(runs, 1);
  assert.deepEqual(
    r.results.map((x) => [x.content, x.outcome]),
    [['ran', 'ok']],
  );
});

test('a denied permission answered again with allow stays denied', async () => {
  mock.push(oa.toolCall('gated', {}), oa.text('ok'));
  let runs = 0;
  const r = harness(mock, {
    tools: [
      {
        name: 'gated',
        invoke: (inv) => {
          runs++;
          inv.complete('ran');
        },
      },
    ],
    callbacks: {
      onPermission: (req: PermissionRequest) => {
        req.respond('deny_once');
        req.respond('allow_once');
      },
    },
  });
  assert.equal((await r.agent.run('go')).status, 0);
  assert.equal(runs, 0);
  assert.deepEqual(
    r.results.map((x) => [x.content, x.outcome]),
    [['[tool failed: denied by user]', 'failed']],
  );
});

test('a tool that reports its output after the deadline aborted it is recorded as a timeout, with that output', async () => {
  mock.push(oa.toolCall('slowish', {}), oa.text('ok'));
  const host = recordingHost();
  const r = harness(mock, {
    host,
    tools: [
      {
        name: 'slowish',
        noPrompt: true,
        timeoutMs: 250,
        invoke: (inv) => {
          inv.signal.addEventListener('abort', () => inv.complete('partial output'));
        },
      },
    ],
  });
  assert.equal((await r.agent.run('go')).status, 0);
  assert.deepEqual(
    r.results.map((x) => [x.content, x.outcome]),
    [['partial output', 'timedout']],
  );
  assert.deepEqual(host.waits, [250], 'the deadline is the timeout asked for; no grace timer once it reported');
});

test('a tool that fails after the deadline aborted it is a timeout too', async () => {
  mock.push(oa.toolCall('slowish', {}), oa.text('ok'));
  const r = harness(mock, {
    host: recordingHost(),
    tools: [
      {
        name: 'slowish',
        noPrompt: true,
        timeoutMs: 100,
        invoke: (inv) => {
          inv.signal.addEventListener('abort', () => inv.fail('killed'));
        },
      },
    ],
  });
  assert.equal((await r.agent.run('go')).status, 0);
  assert.deepEqual(
    r.results.map((x) => [x.content, x.outcome]),
    [['[tool failed: killed]', 'timedout']],
  );
});

test('an async invoke that rejects fails its call with the message; one that throws at once too', async () => {
  mock.push(
    oa.toolCalls([
      { name: 'async_boom', args: {}, id: 'a' },
      { name: 'sync_boom', args: {}, id: 's' },
    ]),
    oa.text('ok'),
  );
  const r = harness(mock, {
    tools: [
      {
        name: 'async_boom',
        noPrompt: true,
        invoke: async () => {
          await new Promise((res) => setTimeout(res, 5));
          throw new Error('async kaboom');
        },
      },
      {
        name: 'sync_boom',
        noPrompt: true,
        invoke: () => {
          throw new Error('sync kaboom');
        },
      },
    ],
  });
  assert.equal((await r.agent.run('go')).status, 0);
  const byName = Object.fromEntries(r.results.map((x) => [x.name, [x.content, x.outcome]]));
  assert.deepEqual(byName, { async_boom: ['[tool failed: async kaboom]', 'failed'], sync_boom: ['[tool failed: sync kaboom]', 'failed'] });
  const sent = mock.posts[1]!.json.messages.filter((m: any) => m.role === 'tool')
    .map((m: any) => m.tool_call_id)
    .sort();
  assert.deepEqual(sent, ['a', 's']);
});

test('a tool that ignores the abort gets the timeout text after the grace period', async () => {
  mock.push(oa.toolCall('deaf', {}), oa.text('ok'));
  const host = recordingHost();
  const r = harness(mock, { host, tools: [{ name: 'deaf', noPrompt: true, timeoutMs: 40, invoke: () => {} }] });
  assert.equal((await r.agent.run('go')).status, 0);
  assert.deepEqual(
    r.results.map((x) => [x.content, x.outcome]),
    [['[tool failed: timed out after 40 ms]', 'timedout']],
  );
  assert.deepEqual(host.waits, [40, 500]);
});

test('a result says when its call never ran: denied, unknown, cancelled while waiting; a running one ran', async () => {
  mock.push(
    oa.toolCalls([
      { id: 'd', name: 'gated', args: {} },
      { id: 'u', name: 'nosuch', args: {} },
      { id: 'r', name: 'slow', args: {} },
      { id: 'w', name: 'gated2', args: {} },
    ]),
  );
  const asked: PermissionRequest[] = [];
  const r = harness(mock, {
    tools: [
      { name: 'gated', invoke: (inv) => inv.complete('ran') },
      { name: 'gated2', invoke: (inv) => inv.complete('ran') },
      { name: 'slow', noPrompt: true, invoke: () => {} },
    ],
    callbacks: { onPermission: (req) => asked.push(req) },
  });
  const results: { id: string; notRun?: string }[] = [];
  r.agent.subscribe((e) => {
    if (e.type === 'tool_result') results.push(e.notRun ? { id: e.id, notRun: e.notRun } : { id: e.id });
  });
  const d = r.turnDone();
  r.agent.submit('go');
  while (asked.length < 2) await new Promise((res) => setTimeout(res, 5));
  asked[0]!.respond('deny_once');
  r.agent.cancel();
  await d;
  assert.deepEqual(
    results.sort((a, b) => a.id.localeCompare(b.id)),
    [{ id: 'd', notRun: 'denied' }, { id: 'r' }, { id: 'u', notRun: 'unknown_tool' }, { id: 'w', notRun: 'cancelled' }],
  );
  // A saved session keeps only the text: the same reasons, read back from it.
  const byId = new Map(r.agent.messages.filter((m) => m.role === 'tool').map((m) => [m.toolCallId, m.content ?? '']));
  assert.deepEqual(
    ['d', 'u', 'w'].map((id) => notRunOf(byId.get(id)!)),
    ['denied', 'unknown_tool', 'cancelled'],
  );
  assert.equal(notRunOf('[tool failed: denied: no permission policy]'), 'denied');
  assert.equal(notRunOf('[tool failed: denied by user (remembered)]'), 'denied');
  assert.equal(notRunOf('[tool failed: exit status 1]'), undefined);
  assert.equal(notRunOf('denied by user'), undefined);
});
