// The first walk of a large workspace starts half a second into a turn, while a reply streams:
// it gives the event loop its turns (keys, the reply) instead of holding it for the whole walk.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rescan, scanWorkspace } from '../../src/checkpoints/scan.js';

test('a long walk lets timers run while it goes, and finds everything', { timeout: 60_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'clm-scan-'));
  try {
    for (let i = 0; i < 1500; i++) {
      mkdirSync(join(root, `d${i}`));
      writeFileSync(join(root, `d${i}`, 'f'), String(i));
    }
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const scan = await scanWorkspace(root, { maxFileBytes: 0 });
    clearInterval(timer);
    assert.ok(ticks > 0, 'no timer ran during the walk');
    assert.equal(scan.files.size, 1500);
    assert.equal(scan.dirs.size, 1500);
    assert.equal(scan.files.get('d1499/f')?.size, 4);

    // Read again after a change: the new directory's subtree is walked, the rest kept.
    mkdirSync(join(root, 'new/deep'), { recursive: true });
    writeFileSync(join(root, 'new/deep/g'), 'x');
    const again = await rescan(root, scan, new Set(['']), { maxFileBytes: 0 });
    assert.equal(again.files.size, 1501);
    assert.ok(again.dirs.has('new/deep'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
