// bwrap's trial run is remembered between starts while nothing it depends on changed: a start
// that finds the yes spawns nothing; a changed binary, a no, or a set-up that failed later make
// the next start ask bwrap again. A stand-in bwrap on PATH counts how often it is asked.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bwrapBackend } from '../../src/sandbox/bwrap.js';
import { tempDir } from '../fixtures/temp-dir.js';

function machine(exitStatus: number) {
  const root = tempDir('clm-verdict-');
  const bin = join(root, 'bin');
  mkdirSync(bin);
  const marks = join(root, 'asked');
  const fake = join(bin, 'bwrap');
  writeFileSync(fake, `#!/bin/sh\necho asked >> '${marks}'\nexit ${exitStatus}\n`);
  chmodSync(fake, 0o755);
  const env = { PATH: `${bin}:/usr/bin:/bin`, HOME: root, XDG_STATE_HOME: join(root, 'state') };
  const asked = () => (existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').filter(Boolean).length : 0);
  /** A new start's check: a fresh backend, as each clm process makes one. */
  const start = () => bwrapBackend(env).availableAsync();
  return { env, fake, asked, start, file: join(root, 'state', 'clm', 'sandbox-verdict.json') };
}

test('a yes is kept: the next start spawns nothing, and is told the same', { timeout: 30_000 }, async () => {
  const m = machine(0);
  assert.equal((await m.start()).ok, true);
  assert.equal(m.asked(), 1);
  assert.ok(existsSync(m.file), 'the verdict is kept in the state directory');
  const again = await m.start();
  assert.equal(again.ok, true);
  assert.equal(m.asked(), 1, 'the second start did not run bwrap');
});

test('a changed bwrap binary is asked again', { timeout: 30_000 }, async () => {
  const m = machine(0);
  await m.start();
  const t = new Date(Date.now() + 5000);
  utimesSync(m.fake, t, t);
  assert.equal((await m.start()).ok, true);
  assert.equal(m.asked(), 2);
});

test('a no is not kept: each start asks, so a fix is seen at once', { timeout: 30_000 }, async () => {
  const m = machine(1);
  assert.equal((await m.start()).ok, false);
  assert.equal((await m.start()).ok, false);
  assert.equal(m.asked(), 2);
  assert.ok(!existsSync(m.file));
});

test('a set-up that failed forgets the yes; the next start asks again', { timeout: 30_000 }, async () => {
  const m = machine(0);
  await m.start();
  bwrapBackend(m.env).setupFailed?.();
  assert.ok(!existsSync(m.file));
  await m.start();
  assert.equal(m.asked(), 2);
});

test('a kept verdict for another user or machine state does not count', { timeout: 30_000 }, async () => {
  const m = machine(0);
  await m.start();
  const kept = JSON.parse(readFileSync(m.file, 'utf8'));
  writeFileSync(m.file, JSON.stringify({ key: `${kept.key}\nsomething else` }));
  await m.start();
  assert.equal(m.asked(), 2);
  writeFileSync(m.file, 'not json');
  await m.start();
  assert.equal(m.asked(), 3);
});
