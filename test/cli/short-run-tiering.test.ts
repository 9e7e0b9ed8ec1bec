// A short run stays on V8's baseline code: the first function V8 optimizes starts its optimizing
// compiler, whose code and working memory cost ~4 MiB of a one-shot run's peak and, on a cloud
// VM where every fresh page faults in the hypervisor too, ~40 ms. What made functions hot in a
// few tool rounds was a call per line or per path (Buffer's indexOf and views, path's
// normalizing); this keeps it from coming back unnoticed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMockLlm } from '../fixtures/mock-llm.js';
import * as oa from '../fixtures/openai-replies.js';
import { BIN, makeDirs, runCli, show } from '../fixtures/run-cli.js';

test('ten read_file rounds of a one-shot run have V8 optimize no function', { timeout: 90_000 }, async () => {
  const mock = await startMockLlm();
  const dirs = makeDirs();
  try {
    const file = join(dirs.root, 'fixture.txt');
    // 128 lines of 64 bytes, as the bench's ten-round scenario reads.
    writeFileSync(file, Array.from({ length: 128 }, (_, i) => `${String(i + 1).padStart(6)} ${'x'.repeat(56)}\n`).join(''));
    const rounds = () => {
      for (let i = 1; i <= 10; i++) mock.push(oa.streamToolCall('read_file', JSON.stringify({ path: file, limit: 200 }), `call_${i}`));
      mock.push(oa.streamText(['read ', 'ten times']));
    };
    // The first run leaves the code cache and the sandbox check's verdict, as a user's earlier runs do.
    rounds();
    const first = await runCli(['-u', mock.base, '-p', dirs.empty, '-o', 'read it ten times'], { dirs, entry: BIN });
    assert.equal(first.code, 0, show(first));
    rounds();
    const r = await runCli(['-u', mock.base, '-p', dirs.empty, '-o', 'read it ten times'], {
      dirs,
      entry: BIN,
      prefix: ['sh', '-c', 'exec "$0" --trace-opt "$@"'],
    });
    assert.equal(r.code, 0, show(r));
    assert.match(r.stdout, /read ten times\n$/);
    assert.equal((r.stderr.match(/\[result: read_file, 8213 bytes\]/g) ?? []).length, 10, r.stderr);
    // Node 22 and later also have Maglev, a quicker mid-tier compiler that takes Node's own small
    // helpers (path's normalizing, fs's argument checks) after a few hundred calls; it is TurboFan,
    // the optimizing compiler, that costs the memory and time above (Maglev: ~2.5 MiB of peak,
    // no wall time, ten rounds on Node 24).
    const marked = r.stdout.split('\n').filter((l) => l.startsWith('[marking ') && !/ to MAGLEV\b/.test(l));
    assert.deepEqual(marked, [], 'V8 optimized these functions');
  } finally {
    await mock.close();
    dirs.cleanup();
  }
});
