// Finding a program as exec would (git for checkpoints, bwrap, a tool's command), without running it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findOnPath, runnable } from '../../src/host/on-path.js';

test('findOnPath: the first executable file of that name on PATH; a directory or a plain file is no program', { timeout: 10_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), 'clm-on-path-'));
  try {
    const [a, b, c] = ['a', 'b', 'c'].map((d) => join(root, d));
    for (const d of [a, b, c]) mkdirSync(d);
    mkdirSync(join(a, 'tool')); // a directory named like it
    writeFileSync(join(b, 'tool'), 'not executable\n'); // mode 0644
    writeFileSync(join(c, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    symlinkSync(join(c, 'tool'), join(a, 'linked'));
    const path = ['', a, b, c].join(':');
    assert.equal(findOnPath('tool', path), join(c, 'tool'));
    assert.equal(findOnPath('linked', path), join(a, 'linked'), 'a link to a program is the program');
    assert.equal(findOnPath('missing', path), null);
    assert.equal(findOnPath('tool', [a, b].join(':')), null);
    chmodSync(join(b, 'tool'), 0o755);
    assert.equal(findOnPath('tool', path), join(b, 'tool'));

    assert.equal(runnable('tool', { PATH: path }), true);
    assert.equal(runnable('tool', {}), false, 'no PATH, no bare names');
    assert.equal(runnable(join(c, 'tool'), {}), true, 'a path is taken as given');
    assert.equal(runnable(join(a, 'tool'), { PATH: path }), false, 'a directory does not run');
    assert.equal(runnable('./nowhere/tool', { PATH: path }), false);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
