// The interactive UI is loaded only where it is used: the CLI's entry, one-shot and REPL chunks
// do not pull src/cli/ui or src/tui in statically (the bench's one-shot start-up must not move).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bundleGraph } from '../fixtures/bundle-graph.js';

test('the entry, one-shot and REPL chunks load neither src/cli/ui nor src/tui; the UI chunk is imported lazily, and markdown after it', async () => {
  const { holding, closure, importsLazily } = await bundleGraph();
  const heavy = (i: string) =>
    i.startsWith('src/cli/ui/') || i.startsWith('src/tui/') || /node_modules\/(marked|highlight\.js|get-east-asian-width)\//.test(i);
  for (const input of ['src/cli/main.ts', 'src/cli/oneshot.ts', 'src/cli/repl.ts']) {
    const chunk = holding(input);
    assert.ok(chunk, `no chunk holds ${input}`);
    assert.deepEqual(closure(chunk).filter(heavy), [], `${input} loads the UI`);
  }
  const ui = holding('src/cli/ui/app.ts');
  assert.ok(ui && ui !== holding('src/cli/main.ts'), 'the UI is not a chunk of its own');
  // The first frame does not wait for the markdown lexer: the transcript's blocks load after it.
  assert.deepEqual(
    closure(ui!).filter((i) => /node_modules\/marked\/|src\/tui\/markdown|src\/cli\/ui\/transcript-view/.test(i)),
    [],
    'the UI chunk loads markdown before its first frame',
  );
  const entry = holding('src/cli/main.ts')!;
  assert.ok(importsLazily(entry, ui!), 'main.ts does not import the UI lazily');
});

test('the UI chunk does not load the runtime (HTTP, the sandbox) before its first frame', async () => {
  const { holding, closure } = await bundleGraph();
  const ui = holding('src/cli/ui/app.ts')!;
  const early = closure(ui).filter((i) => /^src\/(cli\/runtime|host\/node|sandbox\/sandbox)\.ts$/.test(i));
  assert.deepEqual(early, [], 'the UI chunk loads the runtime statically');
});
