// The bubblewrap backend through the real shell tools: mount points, /tmp, the environment,
// stopping, dying with clm, the question to run one refused call outside, and what happens
// where no backend works.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { sandboxedBgExec } from '../../src/builtin-tools/bg-exec.js';
import { sandboxedShellExec } from '../../src/builtin-tools/shell-exec.js';
import { Secrets } from '../../src/host/redact.js';
import { bwrapBackend, sessionTmp } from '../../src/sandbox/bwrap.js';
import { type OutsideQuestion, type RunMode, Sandbox } from '../../src/sandbox/sandbox.js';
import { call } from '../builtin-tools/fake-inv.js';
import { bwrapOrSkip } from '../fixtures/bwrap.js';
import { tally } from '../fixtures/tally.js';
import { makeTrees } from './trees.js';

function sandbox(t: ReturnType<typeof makeTrees>, mode: 'read-only' | 'workspace-write' | 'full' = 'workspace-write', o = {}) {
  process.chdir(t.ws);
  return new Sandbox({ settings: { mode }, cwd: t.ws, env: t.env, ...o });
}

const sh = (sb: Sandbox, command: string, opts: { timeoutMs?: number; id?: string } = {}) =>
  call(sandboxedShellExec(sb), { command }, { timeoutMs: opts.timeoutMs ?? 30_000 }).result;

describe('bubblewrap backend', bwrapOrSkip(), () => {
  test('a mount point made for a command still ending, whose tree was deleted and made again, is made anew', () => {
    const t = makeTrees();
    const sb = sandbox(t);
    const backend = bwrapBackend(t.env);
    const req = { file: '/bin/true', args: [], env: { PATH: '/usr/bin:/bin' }, cwd: t.ws };
    const first = backend.wrap(req, sb.policy);
    assert.ok(first.args.length > 0);
    // The workspace is deleted and made again while the first command has not released its points.
    rmSync(t.ws, { recursive: true, force: true });
    mkdirSync(t.ws, { recursive: true });
    const second = backend.wrap(req, sb.policy);
    const r = spawnSync(second.file, second.args, { env: second.env, cwd: t.ws, encoding: 'utf8', timeout: 30_000 });
    second.release();
    first.release();
    assert.equal(r.status, 0, r.stderr);
  });

  test('a program that lives under /tmp (a checkout there) runs: its directory is shown read-only in the private /tmp', () => {
    const t = makeTrees();
    const dir = mkdtempSync('/tmp/clm-program-');
    try {
      writeFileSync(join(dir, 'helper.mjs'), "export const v = 'from beside';\n");
      writeFileSync(join(dir, 'main.mjs'), "import { v } from './helper.mjs';\nprocess.stdout.write(v);\n");
      const sb = sandbox(t);
      for (const mode of ['workspace-write', 'read-only'] as const) {
        const w = bwrapBackend(t.env).wrap(
          { file: process.execPath, args: [join(dir, 'main.mjs')], env: { PATH: '/usr/bin:/bin' }, cwd: t.ws },
          {
            ...sb.policy,
            mode,
          },
        );
        const r = spawnSync(w.file, w.args, { env: w.env, cwd: w.cwd, encoding: 'utf8', timeout: 30_000 });
        w.release();
        assert.equal(r.stdout, 'from beside', `${mode}: ${r.stderr}`);
        // Shown, not writable: the command's own /tmp takes the writes.
        const wr = bwrapBackend(t.env).wrap(
          { file: '/bin/sh', args: ['-c', `echo x > ${dir}/new`], env: { PATH: '/usr/bin:/bin' }, cwd: t.ws },
          {
            ...sb.policy,
            mode,
          },
        );
        spawnSync(wr.file, wr.args, { env: wr.env, cwd: wr.cwd, encoding: 'utf8', timeout: 30_000 });
        wr.release();
        assert.ok(!existsSync(join(dir, 'new')), `${mode}: a write into the program's directory reached the host`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('it works here, and says how calls run', async () => {
    const t = makeTrees();
    const sb = sandbox(t);
    assert.deepEqual(await sb.check(), sb.availability());
    assert.equal(sb.inForce, 'workspace-write');
    assert.equal(sb.runs(), 'sandbox: workspace-write, no network');
    assert.equal(sb.notice(), null);
    assert.equal(sandbox(t, 'read-only').runs(), 'sandbox: read-only, no network');
    assert.equal(
      new Sandbox({ settings: { mode: 'workspace-write', network: true }, cwd: t.ws, env: t.env }).runs(),
      'sandbox: workspace-write, network on',
    );
    assert.equal(sandbox(t, 'full').runs(), 'NOT sandboxed');
  });

  test('a missing protected directory is made as a mount point for the command only, and removed after', async () => {
    const t = makeTrees();
    const sb = sandbox(t);
    const before = readdirSync(join(t.ws, '.git')).sort();
    // Two commands at once share the mount point; it goes when the last one is gone.
    const slow = sh(sb, 'sleep 1; test -d .git/hooks && echo present');
    const r = await sh(sb, 'ls -a .git/hooks | wc -l');
    assert.equal(r.text.trim(), '2'); // empty: . and ..
    assert.ok(existsSync(join(t.ws, '.git', 'hooks')), 'still in use by the slow command');
    assert.equal((await slow).text.trim(), 'present');
    assert.deepEqual(readdirSync(join(t.ws, '.git')).sort(), before, 'nothing is left in the user tree');
    // A home made writable: ~/.ssh and the config dir exist; the missing key dirs leave nothing either.
    const homeBefore = readdirSync(t.home).sort();
    const sb2 = new Sandbox({ settings: { mode: 'workspace-write', writable: [t.home] }, cwd: t.ws, env: t.env });
    assert.equal((await sh(sb2, `mkdir -p ${t.home}/.aws/x && mkdir -p ${t.home}/.git/hooks`)).ok, false);
    assert.deepEqual(readdirSync(t.home).sort(), homeBefore);
    tally('escapes', 1);
  });

  test("/tmp is the session's own; the environment holds no key and TMPDIR points there", async () => {
    const t = makeTrees();
    const secret = 'sk-secret-value-in-a-variable-0123';
    const sb = new Sandbox({ settings: { mode: 'workspace-write' }, cwd: t.ws, env: t.env, secrets: new Secrets([secret]) });
    const hostFile = join('/tmp', `clm-sbx-host-${process.pid}`);
    writeFileSync(hostFile, 'host');
    process.env.CLM_API_KEY = 'clm-api-key-value-0123456789';
    process.env.SOME_PROVIDER_KEY = secret;
    try {
      const r = await sh(
        sb,
        `echo made > /tmp/mine; test -e ${hostFile} && echo host-visible; echo "tmp=$TMPDIR key=$CLM_API_KEY p=$SOME_PROVIDER_KEY"`,
      );
      assert.equal(r.text, 'tmp=/tmp key= p=\n');
      assert.equal(readFileSync(join(sessionTmp(), 'mine'), 'utf8'), 'made\n');
      // read-only: a scratch /tmp that vanishes with the command.
      const ro = await sh(sandbox(t, 'read-only'), 'echo x > /tmp/scratch && cat /tmp/scratch && ls /tmp');
      assert.equal(ro.text, 'x\nscratch\n');
      // full: the environment is scrubbed all the same.
      assert.equal((await sh(sandbox(t, 'full'), 'echo "k=$CLM_API_KEY"')).text, 'k=\n');
    } finally {
      delete process.env.CLM_API_KEY;
      delete process.env.SOME_PROVIDER_KEY;
    }
  });

  test('a timeout stops the sandboxed command and everything in it', async () => {
    const t = makeTrees();
    const sb = sandbox(t);
    // A length no other test uses: what is looked for among every process of the machine.
    const r = await sh(sb, 'sleep 6007 & sleep 6007', { timeoutMs: 500 });
    assert.equal(r.ok, false);
    assert.match(r.text, /timed out; killed by signal/);
    await waitGone('sleep 6007');
  });

  test('a sandboxed command dies with clm killed by SIGKILL', async () => {
    const t = makeTrees();
    const marker = `${600 + (process.pid % 1000)}.${Date.now() % 100000}`;
    const script = `
      import { Sandbox } from ${JSON.stringify(new URL('../../src/sandbox/sandbox.ts', import.meta.url).href)};
      import { sandboxedShellExec } from ${JSON.stringify(new URL('../../src/builtin-tools/shell-exec.ts', import.meta.url).href)};
      const sb = new Sandbox({ settings: { mode: 'workspace-write' }, cwd: ${JSON.stringify(t.ws)}, env: process.env });
      const ac = new AbortController();
      sandboxedShellExec(sb).invoke({ name: 'shell_exec', args: JSON.stringify({ command: 'sleep ${marker} & sleep ${marker}' }), outputCap: 1000, timeoutMs: 0, signal: ac.signal, done: false, complete() {}, fail() {}, notify() {} });
      setTimeout(() => process.stdout.write('running\\n'), 1500);
    `;
    const c = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../..', import.meta.url),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => c.stdout.on('data', () => resolve()));
    assert.ok(pidsOf(`sleep ${marker}`).length >= 2, 'the commands run');
    c.kill('SIGKILL');
    await waitGone(`sleep ${marker}`);
    tally('faults', 1);
  });

  test('a refused call: the person is asked to run it outside once; yes runs it outside, no does not', async () => {
    const t = makeTrees();
    const sb = sandbox(t);
    const runs: [string | undefined, RunMode][] = [];
    sb.onRun = (id, _name, mode) => runs.push([id, mode]);
    const asked: OutsideQuestion[] = [];
    let answer = false;
    sb.askOutside = async (q) => {
      asked.push(q);
      return answer;
    };
    const target = join(t.outside, 'target');
    const cmd = `echo changed > ${target}`;
    const no = await sh(sb, cmd);
    assert.equal(no.ok, false);
    assert.match(no.text, /\[sandbox: write to \S+\/outside\/target refused \(workspace-write: outside the writable roots\)\]$/);
    assert.equal(readFileSync(target, 'utf8'), 'original\n');
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.name, 'shell_exec');
    assert.deepEqual(JSON.parse(asked[0]!.args), { command: cmd });
    assert.match(asked[0]!.refusals[0]!, /write to \S+ refused/);

    answer = true;
    const yes = await sh(sb, cmd);
    assert.equal(yes.ok, true, yes.text);
    assert.equal(yes.text, '(command produced no output)\n[sandbox: this call ran outside the sandbox, allowed once]');
    assert.equal(readFileSync(target, 'utf8'), 'changed\n');
    assert.deepEqual(
      runs.map((r) => r[1]),
      ['workspace-write', 'outside-once'],
    );
    // A command that fails on its own is not the sandbox's business: nothing is asked.
    assert.equal((await sh(sb, 'exit 3')).ok, false);
    assert.equal(asked.length, 2);
  });

  test('bg_exec: a refusal is said in the job result', async () => {
    const t = makeTrees();
    const sb = sandbox(t, 'read-only');
    const c = call(sandboxedBgExec(sb), { command: `echo x > ${t.ws}/f` });
    assert.equal((await c.result).ok, true);
    assert.match(
      await c.nextNote(),
      /exit status [12]\]\n.*Read-only file system\n\n\[sandbox: write to \S+\/ws\/f refused \(read-only\)\]$/s,
    );
  });
});

describe('no backend', () => {
  test('the default mode becomes unavailable: commands run NOT sandboxed, and the notice says why and how to fix it', async () => {
    const t = makeTrees();
    const env = { ...t.env, PATH: '/nonexistent' };
    const sb = new Sandbox({ cwd: t.ws, env });
    assert.equal(sb.inForce, 'unavailable');
    assert.equal(sb.runs(), 'NOT sandboxed');
    assert.match(
      sb.notice()!,
      /^sandbox: workspace-write is not available: bwrap \(bubblewrap\) is not installed; shell commands run NOT sandboxed \(mode: unavailable\)\. Fix: install bubblewrap .*apt-get install bubblewrap/,
    );
    assert.equal(sb.blocked(), null);
    process.chdir(t.ws);
    const r = await sh(sb, `echo x > ${t.outside}/target && echo done`);
    assert.equal(r.text, 'done\n');
  });

  test('a mode chosen explicitly is never weakened: commands do not run', async () => {
    const t = makeTrees();
    const sb = new Sandbox({ settings: { mode: 'workspace-write' }, cwd: t.ws, env: { ...t.env, PATH: '/nonexistent' } });
    assert.equal(sb.inForce, 'unavailable');
    assert.match(sb.notice()!, /shell commands will not run until it is \(or choose --sandbox full\)/);
    process.chdir(t.ws);
    const r = await sh(sb, `echo x > ${t.outside}/target`);
    assert.equal(r.ok, false);
    assert.match(r.text, /^sandbox: workspace-write is not available \(bwrap \(bubblewrap\) is not installed\); nothing was run/);
    assert.equal(readFileSync(join(t.outside, 'target'), 'utf8'), 'original\n');
    const bg = await call(sandboxedBgExec(sb), { command: 'true' }).result;
    assert.equal(bg.ok, false);
  });

  test('full needs no backend', () => {
    const t = makeTrees();
    const sb = new Sandbox({ settings: { mode: 'full' }, cwd: t.ws, env: { ...t.env, PATH: '/nonexistent' } });
    assert.equal(sb.inForce, 'full');
    assert.equal(sb.notice(), null);
  });
});

/** Host pids whose command line is `cmd`. */
function pidsOf(cmd: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (
        readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() === cmd &&
        !/\) Z/.test(readFileSync(`/proc/${d}/stat`, 'utf8'))
      )
        out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

async function waitGone(cmd: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (!pidsOf(cmd).length) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`processes '${cmd}' still alive: ${pidsOf(cmd)}`);
}
