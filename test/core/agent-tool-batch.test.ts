// The tool batch through the agent: permission answers, timeouts that still report output,
// tools that fail asynchronously — each call gets exactly one result with the right outcome.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockLlmPerFile } from '../fixtures/mock-llm-per-file.js';
import * as oa from '../fixtures/openai-replies.js';
import { harness, recordingHost } from '../fixtures/agent-harness.js';
import type { PermissionRequest } from '../../src/core/types.js';

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
