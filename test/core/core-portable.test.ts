// src/core must run in a browser: no Node builtins, no Node-only packages, no Node globals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const CORE = join(import.meta.dirname, '../../src/core');
// jsonrepair: pure ECMAScript, for the repair of tool-call arguments (providers/tool-arguments.ts).
const ALLOWED_PACKAGES = new Set<string>(['jsonrepair']);

function files(d: string): string[] {
  return readdirSync(d).flatMap((n) => {
    const p = join(d, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('src/core imports only relative modules and portable packages', () => {
  const bad: string[] = [];
  for (const f of files(CORE)) {
    // Comments may mention modules; only code counts.
    const src = readFileSync(f, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    for (const m of src.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      const spec = m[1] ?? m[2]!;
      if (spec.startsWith('.')) continue;
      if (!ALLOWED_PACKAGES.has(spec)) bad.push(`${f}: ${spec}`);
    }
    if (/\b(process|Buffer|require|__dirname)\b\s*[.(]/.test(src)) bad.push(`${f}: uses a Node global`);
  }
  assert.deepEqual(bad, []);
});

test('the checker would catch a node: import', () => {
  const re = /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/;
  assert.equal(re.exec("import { readFileSync } from 'node:fs';")?.[1], 'node:fs');
});

test('src/browser and the browser entries import only the portable core', () => {
  const SRC = join(import.meta.dirname, '../../src');
  const bad: string[] = [];
  for (const f of [...files(join(SRC, 'browser')), ...['browser.ts', 'index.ts', 'portable-api.ts'].map((n) => join(SRC, n))]) {
    const src = readFileSync(f, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    for (const m of src.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      const spec = m[1] ?? m[2]!;
      if (!/^\.\.?\/(\.\.\/)?(core\/|browser\/|index\.js$|portable-api\.js$)|^\.\/(fetch-host|index)\.js$/.test(spec))
        bad.push(`${f}: ${spec}`);
    }
    if (/\b(process|Buffer|require|__dirname)\b\s*[.(]/.test(src)) bad.push(`${f}: uses a Node global`);
  }
  assert.deepEqual(bad, []);
});
