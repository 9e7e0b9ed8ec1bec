// What a run loads before its first request: Node's modules that only a tool, the sandbox check
// or a checkpoint needs (child processes, hashing, the promise file API with its watchers and
// readline) load when first used, not with the one-shot and runtime chunks.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundleGraph } from '../fixtures/bundle-graph.js';
import { startMockLlm } from '../fixtures/mock-llm.js';
import * as oa from '../fixtures/openai-replies.js';
import { makeDirs, runCli, show } from '../fixtures/run-cli.js';

test('the one-shot and runtime chunks load neither node:crypto, node:child_process nor node:fs/promises', async () => {
  const { holding, externals } = await bundleGraph();
  for (const input of ['src/cli/oneshot.ts', 'src/cli/runtime.ts']) {
    const chunk = holding(input);
    assert.ok(chunk, `no chunk holds ${input}`);
    const early = externals(chunk).filter((m) => /^node:(crypto|child_process|fs\/promises)$/.test(m));
    assert.deepEqual(early, [], `${input} loads them before its first request`);
  }
});

test('a one-shot plain turn, stdin /dev/null, loads neither node:v8, perf_hooks nor a file stream for stdin', {
  timeout: 60_000,
}, async () => {
  // The real run, with a preload that writes what Node loaded when the process exits. With stdin
  // a file, process.stdin would be a file stream (its module pulls in fs/promises, readline and
  // fs.watch); node:v8 and the `performance` global (perf_hooks) cost milliseconds each.
  const mock = await startMockLlm();
  const dirs = makeDirs();
  try {
    const preload = join(dirs.root, 'module-list.cjs');
    const list = join(dirs.root, 'modules.txt');
    writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`,
    );
    // The first run keeps what a later one finds at hand (the sandbox check's verdict, the code cache).
    mock.push(oa.streamText(['first']));
    const first = await runCli(['-u', mock.base, '-p', dirs.empty, '-o', 'hi'], { dirs });
    assert.equal(first.code, 0, show(first));
    mock.push(oa.streamText(['plain ', 'answer']));
    const r = await runCli(['-u', mock.base, '-p', dirs.empty, '-o', 'hi'], {
      dirs,
      env: { NODE_OPTIONS: `--require ${preload}` },
      prefix: ['sh', '-c', 'exec "$@" </dev/null', 'sh'],
    });
    assert.equal(r.code, 0, show(r));
    assert.equal(r.stdout, 'plain answer\n');
    const loaded = new Set(readFileSync(list, 'utf8').split('\n'));
    assert.ok(loaded.has('NativeModule http'), 'the list is the run’s own');
    // (A snapshot that starts while the model answers may load the file API, hashing and git's
    // child process; the stdin stream's own module is internal/fs/streams.)
    const early = ['v8', 'perf_hooks', 'internal/fs/streams'].filter((m) => loaded.has(`NativeModule ${m}`));
    assert.deepEqual(early, [] as string[]);
  } finally {
    await mock.close();
    dirs.cleanup();
  }
});
