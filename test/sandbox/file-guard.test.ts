// The file guard of clm's own file accesses for tools (plugins' file API, builtin file tools):
// the check before opening, and the one after, on what was really opened — a link swapped in
// between (a command running meanwhile could do it) is caught, nothing is truncated, and a file
// the refused open created is removed again.

import assert from 'node:assert/strict';
import { linkSync, mkdirSync, readFileSync, existsSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readRegularFileSync, writeRegularFileSync } from '../../src/host/regular-file.js';
import { FileGuard, SandboxRefusal } from '../../src/sandbox/file-guard.js';
import { resolvePolicy } from '../../src/sandbox/workspace.js';
import { tally } from '../fixtures/tally.js';
import { makeTrees } from './trees.js';

function guarded(mode: 'read-only' | 'workspace-write' | 'full' = 'workspace-write') {
  const t = makeTrees();
  return { t, g: new FileGuard(resolvePolicy(mode, {}, { cwd: t.ws, env: t.env })) };
}

function write(g: FileGuard, path: string, data: string): void {
  g.beforeWrite(path);
  writeRegularFileSync(path, data, { opened: (fd, n) => g.afterOpenWrite(fd, n) });
}

test('inside the workspace a write goes through; outside, and on protected paths, it is refused before opening', () => {
  const { t, g } = guarded();
  write(g, join(t.ws, 'new.txt'), 'hello');
  assert.equal(readFileSync(join(t.ws, 'new.txt'), 'utf8'), 'hello');
  assert.throws(
    () => write(g, join(t.outside, 'target'), 'x'),
    /^SandboxRefusal: \[sandbox: write to \S+\/outside\/target refused \(workspace-write: outside the writable roots\)\]$/,
  );
  assert.throws(() => write(g, join(t.ws, '.git', 'config'), 'x'), /protected: git config/);
  assert.equal(readFileSync(join(t.outside, 'target'), 'utf8'), 'original\n');
});

test('a file with another hard link is not written (the other name may be outside)', () => {
  const { t, g } = guarded();
  linkSync(join(t.outside, 'target'), join(t.ws, 'alias'));
  assert.throws(() => write(g, join(t.ws, 'alias'), 'x'), /it has 2 hard links/);
  assert.equal(readFileSync(join(t.outside, 'target'), 'utf8'), 'original\n');
});

test('a link swapped in after the check: the opened file is checked, and not truncated', () => {
  const { t, g } = guarded();
  const p = join(t.ws, 'innocent');
  g.beforeWrite(p); // passes: a new file in the workspace
  symlinkSync(join(t.outside, 'target'), p); // the race
  assert.throws(() => writeRegularFileSync(p, 'x', { opened: (fd, n) => g.afterOpenWrite(fd, n) }), SandboxRefusal);
  assert.equal(readFileSync(join(t.outside, 'target'), 'utf8'), 'original\n');
  tally('escapes', 1);
});

test('a directory swapped for a link after the check: the file the open created outside is removed again', () => {
  const { t, g } = guarded();
  mkdirSync(join(t.ws, 'sub'));
  const p = join(t.ws, 'sub', 'made');
  g.beforeWrite(p);
  rmSync(join(t.ws, 'sub'), { recursive: true });
  symlinkSync(t.outside, join(t.ws, 'sub'));
  assert.throws(() => writeRegularFileSync(p, 'x', { opened: (fd, n) => g.afterOpenWrite(fd, n) }), /outside the writable roots/);
  assert.equal(existsSync(join(t.outside, 'made')), false);
  tally('escapes', 1);
});

test('reads: key files and secrets.lua refused, also through a link swapped in; /proc refused whole', () => {
  const { t, g } = guarded();
  const key = join(t.home, '.ssh', 'id_ed25519');
  assert.throws(() => g.beforeRead(key), /read of \S+ refused \(protected: key file\)/);
  const p = join(t.ws, 'notes');
  g.beforeRead(p);
  symlinkSync(key, p);
  assert.throws(() => readRegularFileSync(p, 1 << 20, { opened: (fd) => g.afterOpenRead(fd) }), /protected: key file/);
  assert.throws(() => g.beforeRead('/proc/self/status'), /processes are out of reach/);
  assert.equal(readRegularFileSync(join(t.ws, 'README'), 1 << 20, { opened: (fd) => g.afterOpenRead(fd) }).toString(), 'workspace file\n');
  tally('escapes', 2);
});

test('read-only refuses every write; full checks nothing', () => {
  const ro = guarded('read-only');
  assert.throws(() => write(ro.g, join(ro.t.ws, 'x'), 'x'), /refused \(read-only\)/);
  const full = guarded('full');
  write(full.g, join(full.t.outside, 'target'), 'x');
  assert.equal(readFileSync(join(full.t.outside, 'target'), 'utf8'), 'x');
});
