// The sandbox in the permission questions, as a unit: the line saying how a call of each kind of
// tool would run (the desk shows it under the question; the json records and explanations use it).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toolRun } from '../../src/cli/run-sandbox.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { makeTrees } from '../sandbox/trees.js';

test('how a call would run, per tool', () => {
  const t = makeTrees();
  const sb = new Sandbox({ settings: { mode: 'workspace-write' }, cwd: t.ws, env: { ...t.env, PATH: '/nonexistent' } });
  assert.deepEqual(toolRun(sb, 'shell_exec'), { mode: 'unavailable', text: 'NOT sandboxed' });
  assert.deepEqual(toolRun(sb, 'write_file'), { mode: 'workspace-write', text: 'sandbox: workspace-write' });
  assert.deepEqual(toolRun(sb, 'my_plugin_tool'), { mode: 'workspace-write', text: 'sandbox: workspace-write for files, network open' });
  assert.equal(toolRun(sb, 'mcp__fs__read').mode, 'unconfined');
  assert.equal(toolRun(sb, 'mcp__fs__read', new Set(['fs'])).mode, 'unavailable');
  const full = new Sandbox({ settings: { mode: 'full' }, cwd: t.ws, env: t.env });
  assert.deepEqual(toolRun(full, 'read_file'), { mode: 'full', text: 'NOT sandboxed' });
});
