// The shell parser's grammar is vendored (vendor/tree-sitter-bash), not a dependency: nothing clm
// installs at run time has an install script (a native build that fails offline, with
// --ignore-scripts or where no prebuilt binary fits), and the vendored files are the recorded
// package's, byte for byte (scripts/bash-grammar.mjs re-derives them from the registry).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../fixtures/run-cli.js';

interface LockEntry {
  dev?: boolean;
  hasInstallScript?: boolean;
}

test('no runtime dependency in package-lock.json has an install script, and tree-sitter-bash is none of them', () => {
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
  assert.equal(pkg.dependencies['tree-sitter-bash'], undefined);
  assert.equal(pkg.allowScripts?.['tree-sitter-bash'], undefined);
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const scripted = Object.entries(lock.packages)
    .filter(([path, e]) => path && !e.dev && e.hasInstallScript)
    .map(([path]) => path);
  assert.deepEqual(scripted, []);
  assert.ok(!Object.keys(lock.packages).some((p) => p.endsWith('node_modules/tree-sitter-bash')), 'tree-sitter-bash is not installed');
  // The grammar's loader is a runtime dependency, pinned.
  assert.match(pkg.dependencies['web-tree-sitter'], /^\d+\.\d+\.\d+$/);
});

test('the vendored grammar and its licence are the recorded version of the package, byte for byte', () => {
  const dir = join(REPO, 'vendor', 'tree-sitter-bash');
  const record = JSON.parse(readFileSync(join(dir, 'source.json'), 'utf8'));
  assert.equal(record.package, 'tree-sitter-bash');
  assert.match(record.integrity, /^sha512-/);
  assert.deepEqual(Object.keys(record.sha256).sort(), ['LICENSE', 'tree-sitter-bash.wasm']);
  const sha256 = (file: string) =>
    createHash('sha256')
      .update(readFileSync(join(dir, file)))
      .digest('hex');
  for (const [file, sum] of Object.entries(record.sha256)) assert.equal(sha256(file), sum, file);
  assert.match(readFileSync(join(dir, 'LICENSE'), 'utf8'), /^The MIT License/);
});
