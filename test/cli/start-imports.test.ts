// What a run loads before its first request: Node's modules that only a tool, the sandbox check
// or a checkpoint needs (child processes, hashing, the promise file API with its watchers and
// readline) load when first used, not with the one-shot and runtime chunks.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bundleGraph } from '../fixtures/bundle-graph.js';

test('the one-shot and runtime chunks load neither node:crypto, node:child_process nor node:fs/promises', async () => {
  const { holding, externals } = await bundleGraph();
  for (const input of ['src/cli/oneshot.ts', 'src/cli/runtime.ts']) {
    const chunk = holding(input);
    assert.ok(chunk, `no chunk holds ${input}`);
    const early = externals(chunk).filter((m) => /^node:(crypto|child_process|fs\/promises)$/.test(m));
    assert.deepEqual(early, [], `${input} loads them before its first request`);
  }
});
