// realPathOf: where a path really leads, for the sandbox's protected and writable paths — also
// for paths that do not exist yet (a write would create them) and through links, dangling ones too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { realPathOf } from '../../src/sandbox/workspace.js';

test('realPathOf follows links for what exists and for what a write would create', { timeout: 10_000 }, () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'clm-realpath-')));
  try {
    mkdirSync(join(root, 'real/sub'), { recursive: true });
    writeFileSync(join(root, 'real/file'), 'x');
    symlinkSync(join(root, 'real'), join(root, 'link'));
    symlinkSync(join(root, 'real/not-yet'), join(root, 'dangling'));
    symlinkSync(join(root, 'loop-a'), join(root, 'loop-b'));
    symlinkSync(join(root, 'loop-b'), join(root, 'loop-a'));
    symlinkSync('real/sub', join(root, 'relative'));

    // What exists: its real path.
    assert.equal(realPathOf(join(root, 'real/file')), join(root, 'real/file'));
    assert.equal(realPathOf(join(root, 'link/file')), join(root, 'real/file'));
    assert.equal(realPathOf(join(root, 'relative')), join(root, 'real/sub'));
    assert.equal(realPathOf(join(root, 'link/../real/./sub')), join(root, 'real/sub'));
    // What does not: the nearest existing ancestor's real path and the rest.
    assert.equal(realPathOf(join(root, 'link/missing')), join(root, 'real/missing'));
    assert.equal(realPathOf(join(root, 'link/a/b/c')), join(root, 'real/a/b/c'));
    assert.equal(realPathOf(join(root, 'missing/deeper')), join(root, 'missing/deeper'));
    // A dangling link leads to where a write through it would create the file.
    assert.equal(realPathOf(join(root, 'dangling')), join(root, 'real/not-yet'));
    assert.equal(realPathOf(join(root, 'relative/new')), join(root, 'real/sub/new'));
    // A loop ends (at the link, as far as it goes); a path through a file is what it says.
    assert.match(realPathOf(join(root, 'loop-a')), /loop-[ab]$/);
    assert.equal(realPathOf(join(root, 'real/file/inside')), join(root, 'real/file/inside'));
    assert.equal(realPathOf('/'), '/');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('realPathOf takes any spelling of a path as resolve would read it', { timeout: 10_000 }, () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'clm-realpath-')));
  try {
    mkdirSync(join(root, 'real/sub'), { recursive: true });
    symlinkSync(join(root, 'real'), join(root, 'link'));
    const spellings = [
      'link/',
      'link//sub',
      'link/./sub/',
      'missing/../link/sub',
      'link/sub/..',
      'link/sub/.',
      '/link/x',
      'link/no/./such//file/',
    ];
    for (const s of spellings) {
      const p = s.startsWith('/') ? `${root}${s}` : `${root}/${s}`;
      assert.equal(realPathOf(p), realPathOf(resolve(p)), p);
    }
    assert.equal(realPathOf(`${root}//link//sub//`), join(root, 'real/sub'));
    assert.equal(realPathOf(''), realpathSync(process.cwd()), 'the empty path is the working directory');
    assert.equal(realPathOf('/'), '/');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
