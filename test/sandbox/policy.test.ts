// The policy's path rules and the recognition of a refusal in a failed command's output: pure.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readRefusal, runsText, type SandboxPolicy, within, writeRefusal, writeRefusalText } from '../../src/sandbox/policy.js';
import { pathsIn, RefusalScanner, refusalsIn } from '../../src/sandbox/refusal.js';

function policy(mode: SandboxPolicy['mode'], o: Partial<SandboxPolicy> = {}): SandboxPolicy {
  return {
    mode,
    workspace: '/ws',
    cwd: '/ws/sub',
    writable: mode === 'workspace-write' ? ['/ws', '/data/out'] : [],
    network: false,
    protected: [
      { path: '/ws/.git/hooks', kind: 'dir', what: 'git hooks' },
      { path: '/ws/.git/config', kind: 'file', what: 'git config' },
      { path: '/home/u/.config/clm', kind: 'dir', what: "clm's configuration" },
    ],
    unreadable: [
      { path: '/home/u/.config/clm/secrets.lua', kind: 'file', what: "clm's secrets" },
      { path: '/home/u/.ssh', kind: 'dir', what: 'key file' },
    ],
    ...o,
  };
}

describe('within', () => {
  test('a path is within itself and its ancestors, not in a sibling sharing a prefix', () => {
    assert.ok(within('/ws', '/ws'));
    assert.ok(within('/ws/a/b', '/ws'));
    assert.ok(!within('/wsx/a', '/ws'));
    assert.ok(!within('/w', '/ws'));
    assert.ok(within('/anything', '/'));
  });
});

describe('writeRefusal', () => {
  const ww = policy('workspace-write');
  test('workspace-write: the writable roots may be written, the rest not', () => {
    assert.equal(writeRefusal(ww, '/ws/src/a.ts'), null);
    assert.equal(writeRefusal(ww, '/data/out/x'), null);
    assert.deepEqual(writeRefusal(ww, '/etc/hosts'), { why: 'outside' });
    assert.deepEqual(writeRefusal(ww, '/wsx/a'), { why: 'outside' });
  });
  test('protected paths are refused inside a writable root, also below them and where they do not exist yet', () => {
    assert.equal(writeRefusal(ww, '/ws/.git/hooks/pre-commit')?.why, 'protected');
    assert.equal(writeRefusal(ww, '/ws/.git/hooks')?.why, 'protected');
    assert.equal(writeRefusal(ww, '/ws/.git/config')?.why, 'protected');
    assert.equal(writeRefusal(ww, '/ws/.git/index'), null);
  });
  test('the config directory is protected even when a writable root holds it', () => {
    const p = policy('workspace-write', { writable: ['/home/u'] });
    assert.equal(writeRefusal(p, '/home/u/.config/clm/config.lua')?.why, 'protected');
    assert.equal(writeRefusal(p, '/home/u/.config/clm/plugins/x.lua')?.why, 'protected');
    assert.equal(writeRefusal(p, '/home/u/.ssh/authorized_keys')?.why, 'unreadable');
    assert.equal(writeRefusal(p, '/home/u/notes.txt'), null);
  });
  test('read-only refuses every write; full none', () => {
    assert.deepEqual(writeRefusal(policy('read-only'), '/ws/a'), { why: 'read-only' });
    assert.equal(writeRefusal(policy('full'), '/ws/.git/hooks/pre-commit'), null);
    assert.equal(writeRefusal(policy('full'), '/etc/hosts'), null);
  });
  test('the refusal text names the path and the reason', () => {
    const ro = policy('read-only');
    assert.equal(writeRefusalText(ro, '/etc/hosts', writeRefusal(ro, '/etc/hosts')!), 'write to /etc/hosts refused (read-only)');
    assert.equal(
      writeRefusalText(ww, '/etc/hosts', writeRefusal(ww, '/etc/hosts')!),
      'write to /etc/hosts refused (workspace-write: outside the writable roots)',
    );
    assert.equal(
      writeRefusalText(ww, '/ws/.git/hooks/x', writeRefusal(ww, '/ws/.git/hooks/x')!),
      'write to /ws/.git/hooks/x refused (protected: git hooks)',
    );
  });
});

describe('readRefusal', () => {
  test('secrets.lua and key files are unreadable in both confining modes, readable in full', () => {
    for (const mode of ['read-only', 'workspace-write'] as const) {
      assert.equal(readRefusal(policy(mode), '/home/u/.ssh/id_ed25519')?.what, 'key file');
      assert.equal(readRefusal(policy(mode), '/home/u/.config/clm/secrets.lua')?.what, "clm's secrets");
      assert.equal(readRefusal(policy(mode), '/home/u/.config/clm/config.lua'), null);
      assert.equal(readRefusal(policy(mode), '/home/u/.sshx'), null);
    }
    assert.equal(readRefusal(policy('full'), '/home/u/.ssh/id_ed25519'), null);
  });
});

describe('runsText', () => {
  test('says how a call runs', () => {
    assert.equal(runsText('workspace-write', false), 'sandbox: workspace-write, no network');
    assert.equal(runsText('workspace-write', true), 'sandbox: workspace-write, network on');
    assert.equal(runsText('read-only', false), 'sandbox: read-only, no network');
    assert.equal(runsText('full', true), 'NOT sandboxed');
    assert.equal(runsText('unavailable', false), 'NOT sandboxed');
  });
});

describe('refusal recognition', () => {
  test('paths are found quoted and in shell style', () => {
    assert.deepEqual(pathsIn("touch: cannot touch '/etc/x': Read-only file system"), ['/etc/x']);
    assert.deepEqual(pathsIn('sh: 1: cannot create /etc/hosts: Read-only file system'), ['/etc/hosts']);
    assert.deepEqual(pathsIn('bash: /etc/hosts: Read-only file system'), ['/etc/hosts']);
    assert.deepEqual(pathsIn("EROFS: read-only file system, open '/etc/x'"), ['/etc/x']);
    assert.deepEqual(pathsIn("OSError: [Errno 30] Read-only file system: 'rel/x'"), ['rel/x']);
  });

  const ro = policy('read-only');
  const ww = policy('workspace-write');
  test('a read-only file system on a path the policy refuses is the sandbox', () => {
    assert.deepEqual(refusalsIn(['sh: 1: cannot create /etc/hosts: Read-only file system'], ro), [
      '[sandbox: write to /etc/hosts refused (read-only)]',
    ]);
    assert.deepEqual(refusalsIn(["touch: cannot touch '/ws/.git/hooks/pre-commit': Read-only file system"], ww), [
      '[sandbox: write to /ws/.git/hooks/pre-commit refused (protected: git hooks)]',
    ]);
  });
  test('relative paths are taken from the working directory', () => {
    assert.deepEqual(refusalsIn(["touch: cannot touch '../../etc/x': Read-only file system"], ww), [
      '[sandbox: write to /etc/x refused (workspace-write: outside the writable roots)]',
    ]);
  });
  test('a read-only error inside the writable roots is not the sandbox', () => {
    assert.deepEqual(refusalsIn(["touch: cannot touch '/ws/mnt/x': Read-only file system"], ww), []);
  });
  test('a message without a path still says a write was refused', () => {
    assert.deepEqual(refusalsIn(['Read-only file system at -e line 1.'], ro), [
      '[sandbox: a write outside the writable roots was refused (read-only)]',
    ]);
  });
  test('a permission denied on a key file, a busy protected directory, a cross-device link', () => {
    assert.deepEqual(refusalsIn(['cat: /home/u/.ssh/id_rsa: Permission denied'], ww), [
      '[sandbox: read of /home/u/.ssh/id_rsa refused (protected: key file)]',
    ]);
    assert.deepEqual(refusalsIn(["mv: cannot move '/ws/.git' to '/ws/g': Device or resource busy"], ww), [
      '[sandbox: move or removal of /ws/.git refused (protected: git hooks)]',
    ]);
    assert.deepEqual(refusalsIn(["ln: failed to create hard link '/ws/l' => '/etc/passwd': Invalid cross-device link"], ww), [
      '[sandbox: link to /etc/passwd refused (outside the writable roots)]',
    ]);
    // Permission denied on an ordinary file is the file's own mode.
    assert.deepEqual(refusalsIn(['cat: /ws/secret: Permission denied'], ww), []);
  });
  test('network errors are the sandbox only while the network is off', () => {
    const lines = ['curl: (6) Could not resolve host: example.com'];
    assert.deepEqual(refusalsIn(lines, ww), ['[sandbox: network is off]']);
    assert.deepEqual(refusalsIn(lines, { ...ww, network: true }), []);
    assert.deepEqual(refusalsIn(['connect: Connection refused'], ro), ['[sandbox: network is off]']);
  });
  test('full recognises nothing', () => {
    assert.deepEqual(refusalsIn(['sh: 1: cannot create /etc/hosts: Read-only file system'], policy('full')), []);
  });
  test('the scanner keeps only the lines that may tell of a refusal, across chunk boundaries', () => {
    const s = new RefusalScanner();
    s.push(Buffer.from('building...\nsh: 1: cannot create /etc/ho'));
    s.push(Buffer.from('sts: Read-only file system\nok\n'));
    s.push(Buffer.from('x'.repeat(100_000)));
    s.push(Buffer.from('\ncurl: (6) Could not resolve host: a'));
    assert.deepEqual(s.end(), ['sh: 1: cannot create /etc/hosts: Read-only file system', 'curl: (6) Could not resolve host: a']);
  });
});
