// What the sandbox is built from may change before bwrap mounts it: a listening unix socket of
// another program (masked in the sandbox) removed by its owner in between made bwrap fail
// ("Can't create file at …/sock"), and the command — a shell command, an MCP server — never ran.
// It is started again with the sandbox built anew; where setup keeps failing, the result says so
// with bwrap's own words, for a command and for an MCP server alike.

import assert from 'node:assert/strict';
import { unlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sandboxedBgExec } from '../../src/builtin-tools/bg-exec.js';
import { sandboxedShellExec } from '../../src/builtin-tools/shell-exec.js';
import { connectMcpServers } from '../../src/mcp/index.js';
import type { SpawnRequest, WrappedSpawn } from '../../src/sandbox/backend.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { call } from '../builtin-tools/fake-inv.js';
import { bwrapOrSkip } from '../fixtures/bwrap.js';
import { tally } from '../fixtures/tally.js';
import { makeTrees, type Trees } from './trees.js';

const SHELL_SERVER = fileURLToPath(new URL('../fixtures/mcp/shell-server.mjs', import.meta.url));

/** A unix socket listening outside the writable roots: the sandbox masks it. */
async function socketOutside(t: Trees): Promise<{ path: string; server: Server }> {
  const path = join(t.outside, 'sock');
  const server = createServer((c) => c.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  return { path, server };
}

type Build = (req: SpawnRequest) => WrappedSpawn;

/** `build`, then `after` for the first `times` builds (what happens between building a sandbox and bwrap setting it up). */
function thenAfter(build: Build, times: number, after: (w: WrappedSpawn) => WrappedSpawn): Build & { builds: number } {
  const b = Object.assign(
    (req: SpawnRequest) => {
      const w = build(req);
      return b.builds++ < times ? after(w) : w;
    },
    { builds: 0 },
  );
  return b;
}

/**
 * A mount bwrap cannot make (its parent does not exist on a read-only root): the setup fails every
 * time. bwrap says so for this mount — or for another one it fails on first: a socket of another
 * test, running beside this one, masked in the sandbox and removed before bwrap got to it.
 */
const unmountable = (t: Trees) => (w: WrappedSpawn) => {
  const at = w.args.indexOf('--');
  return { ...w, args: [...w.args.slice(0, at), '--ro-bind', '/dev/null', join(t.outside, 'gone', 'x'), ...w.args.slice(at)] };
};

/** Trees with a listening socket outside them (closed after the test), and a sandbox over them. */
async function withSocketOutside(t: { after(fn: () => unknown): void }) {
  const trees = makeTrees();
  const sock = await socketOutside(trees);
  t.after(() => sock.server.close());
  return { trees, sock, sb: sandboxIn(trees) };
}

function sandboxIn(t: Trees): Sandbox {
  process.chdir(t.ws);
  return new Sandbox({ settings: { mode: 'workspace-write' }, cwd: t.ws, env: t.env });
}

async function mcpStart(confine: Build) {
  const m = connectMcpServers([{ name: 'srv', command: [process.execPath, SHELL_SERVER], sandbox: true }], { confine });
  const report = await m.waitReady(60_000);
  return { m, report };
}

/** `build`, with `socket` removed right after its first build (before bwrap mounts over it). */
function socketGoneOnce(build: Build, socket: string) {
  return thenAfter(build, 1, (w) => {
    unlinkSync(socket);
    return w;
  });
}

describe('a sandbox that cannot be set up', bwrapOrSkip(), () => {
  test('a socket removed between the building and the setup: the command is started again, and runs', async (t) => {
    const { sock, sb } = await withSocketOutside(t);
    const build = socketGoneOnce((r) => Sandbox.prototype.confine.call(sb, r), sock.path);
    sb.confine = build;
    const r = await call(sandboxedShellExec(sb), { command: 'echo ran' }, { timeoutMs: 30_000 }).result;
    assert.equal(r.text, 'ran\n');
    assert.equal(r.ok, true);
    assert.equal(build.builds, 2);
    tally('faults', 1);
  });

  test("a setup that keeps failing: tried a bounded number of times, then said with bwrap's words; nothing ran", async () => {
    const trees = makeTrees();
    const sb = sandboxIn(trees);
    const build = thenAfter((r) => Sandbox.prototype.confine.call(sb, r), Number.POSITIVE_INFINITY, unmountable(trees));
    sb.confine = build;
    const marker = join(trees.ws, 'ran');
    const r = await call(sandboxedShellExec(sb), { command: `touch ${marker}` }, { timeoutMs: 30_000 }).result;
    assert.equal(r.ok, false);
    assert.match(
      r.text,
      /^bwrap: Can't [^\n]+\n\n\(exit status 1\)\n\[sandbox: it could not be set up \(the lines above\); nothing was run\]$/,
    );
    assert.equal(build.builds, 3);
    assert.throws(() => unlinkSync(marker), /ENOENT/);
    tally('faults', 1);
  });

  test('bg_exec: the job is started again and its result is its own; a setup that keeps failing is said', async (t) => {
    const { trees, sock, sb } = await withSocketOutside(t);
    const build = socketGoneOnce((r) => Sandbox.prototype.confine.call(sb, r), sock.path);
    sb.confine = build;
    const ok = call(sandboxedBgExec(sb), { command: 'echo ran' });
    assert.equal((await ok.result).ok, true);
    assert.match(await ok.nextNote(), /finished, exit status 0\]\nran\n$/);
    assert.equal(build.builds, 2);
    sb.confine = thenAfter((r) => Sandbox.prototype.confine.call(sb, r), Number.POSITIVE_INFINITY, unmountable(trees));
    const bad = call(sandboxedBgExec(sb), { command: 'echo ran' });
    assert.equal((await bad.result).ok, true);
    assert.match(await bad.nextNote(), /finished, exit status 1\]\nbwrap: Can't [^\n]+\n\n\[sandbox: it could not be set up/);
    tally('faults', 1);
  });

  test('an MCP server whose socket went away in between is started again and answers', async (t) => {
    const { sock, sb } = await withSocketOutside(t);
    const build = socketGoneOnce((r) => sb.confineServer(r), sock.path);
    const { m, report } = await mcpStart(build);
    try {
      assert.deepEqual(report.failed, []);
      assert.deepEqual(report.ready, ['srv']);
      const tool = m.tools().find((d) => d.name === 'mcp__srv__sh')!;
      assert.match((await call(tool, { command: 'echo ran' }, { timeoutMs: 30_000 }).result).text, /^ran\n/);
      assert.equal(build.builds, 2);
    } finally {
      await m.close();
    }
    tally('faults', 1);
  });

  test("an MCP server whose sandbox cannot be set up: the error carries bwrap's words", async () => {
    const trees = makeTrees();
    const sb = sandboxIn(trees);
    const build = thenAfter((r) => sb.confineServer(r), Number.POSITIVE_INFINITY, unmountable(trees));
    const { m, report } = await mcpStart(build);
    try {
      assert.deepEqual(report.ready, []);
      assert.match(
        report.failed[0]?.error ?? '',
        /^connect failed \(server exited during initialize, status 1; its stderr ends: bwrap: Can't [^\n]+\)$/,
      );
      assert.equal(build.builds, 3);
    } finally {
      await m.close();
    }
    tally('faults', 1);
  });
});
