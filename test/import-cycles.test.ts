// No import cycle in src/, type-only imports and lazy import() included: a cycle ties modules that
// then can only be understood, tested and moved together.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const SRC = join(import.meta.dirname, '../src');

function sources(d: string): string[] {
  return readdirSync(d).flatMap((n) => {
    const p = join(d, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

/** The files of src/ each file imports (`import`, `import type`, `export … from`, `import()`). */
function importGraph(files: readonly string[], read: (f: string) => string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const deps: string[] = [];
    for (const { fileName } of ts.preProcessFile(read(f), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(dirname(f), fileName).replace(/\.js$/, '.ts');
      if (files.includes(target)) deps.push(target);
      else if (files.includes(join(target.replace(/\.ts$/, ''), 'index.ts'))) deps.push(join(target.replace(/\.ts$/, ''), 'index.ts'));
    }
    graph.set(f, deps);
  }
  return graph;
}

/** The groups of files that reach each other through imports (Tarjan's strongly connected components). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || graph.get(v)?.includes(v)) found.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('src/ has no import cycle, type-only imports included', () => {
  const files = sources(SRC);
  assert.ok(files.length > 100, `found ${files.length} source files`);
  const found = cycles(importGraph(files, (f) => readFileSync(f, 'utf8')));
  assert.deepEqual(
    found.map((g) => g.map((f) => relative(SRC, f)).join(' ↔ ')),
    [],
  );
});

test('the check finds a type-only cycle, an export-from and a lazy import', () => {
  const text: Record<string, string> = {
    '/s/a.ts': "import type { B } from './b.js';",
    '/s/b.ts': "export { a } from './a.js';",
    '/s/c.ts': "const d = () => import('./d/index.js');",
    '/s/d/index.ts': "import { c } from '../c.js';",
    '/s/e.ts': "import { a } from './a.js';",
  };
  const graph = importGraph(Object.keys(text), (f) => text[f]!);
  assert.deepEqual(cycles(graph), [
    ['/s/a.ts', '/s/b.ts'],
    ['/s/c.ts', '/s/d/index.ts'],
  ]);
});
