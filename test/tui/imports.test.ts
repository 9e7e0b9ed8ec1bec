// The toolkit stands alone: nothing in src/tui imports the rest of src/, and the one-shot paths of
// the CLI bundle do not load it (the interactive UI imports it lazily).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const tui = join(root, 'src/tui');

test('src/tui imports nothing else of src/', () => {
  for (const f of readdirSync(tui).filter((n) => n.endsWith('.ts'))) {
    const text = readFileSync(join(tui, f), 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)'([^']+)'/g)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) assert.ok(spec.startsWith('./') && !spec.slice(2).includes('/'), `${f} imports ${spec}`);
    }
  }
});

test('the CLI entry chunk does not load src/tui statically', async () => {
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
  const entry = Object.keys(outputs).find((k) => outputs[k]!.entryPoint === 'src/cli/main.ts')!;
  // Everything the entry chunk pulls in before running: its own inputs and its static imports, transitively.
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length) {
    const o = stack.pop()!;
    if (seen.has(o)) continue;
    seen.add(o);
    for (const imp of outputs[o]!.imports) if (imp.kind === 'import-statement' && outputs[imp.path]) stack.push(imp.path);
  }
  const inputs = [...seen].flatMap((o) => Object.keys(outputs[o]!.inputs));
  const leaked = inputs.filter((i) => i.startsWith('src/tui/') || /node_modules\/(marked|highlight\.js|get-east-asian-width)\//.test(i));
  assert.deepEqual(leaked, []);
});
