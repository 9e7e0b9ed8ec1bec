// The interactive UI is loaded only where it is used: the CLI's entry, one-shot and REPL chunks
// do not pull src/cli/ui or src/tui in statically (the bench's one-shot start-up must not move).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

test('the entry, one-shot and REPL chunks load neither src/cli/ui nor src/tui; the UI chunk is imported lazily, and markdown after it', async () => {
  const esbuild = await import('esbuild');
  const r = await esbuild.build({
    entryPoints: { cli: join(root, 'src/cli/main.ts') },
    outdir: '/nonexistent',
    write: false,
    metafile: true,
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['wasmoon', '@modelcontextprotocol/*'],
    logLevel: 'silent',
  });
  const outputs = r.metafile.outputs;
  const holding = (input: string) => Object.keys(outputs).find((k) => Object.keys(outputs[k]!.inputs).includes(input));
  /** The inputs a chunk runs with before any lazy import: its own and its static imports', transitively. */
  const closure = (chunk: string) => {
    const seen = new Set<string>();
    const stack = [chunk];
    while (stack.length) {
      const o = stack.pop()!;
      if (seen.has(o)) continue;
      seen.add(o);
      for (const imp of outputs[o]!.imports) if (imp.kind === 'import-statement' && outputs[imp.path]) stack.push(imp.path);
    }
    return [...seen].flatMap((o) => Object.keys(outputs[o]!.inputs));
  };
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
  assert.ok(
    outputs[entry]!.imports.some((i) => i.path === ui && i.kind === 'dynamic-import'),
    'main.ts does not import the UI lazily',
  );
});
