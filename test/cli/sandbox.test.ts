// The sandbox through the real CLI: `--sandbox` and config.lua's keys, `clm sandbox check`, the
// start-up notice where the mode cannot be had, the refusal said to the model and recorded in
// the json result and the session file, the permission question saying how a call runs, the
// separate question to run a refused call outside, the status bar and /sandbox.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TYPING_GAP_MS } from '../../src/cli/permission-desk.js';
import { bwrapOrSkip } from '../fixtures/bwrap.js';
import { cliSuite } from '../fixtures/cli-suite.js';
import * as oa from '../fixtures/openai-replies.js';
import { spawnPty } from '../fixtures/pty-screen.js';
import { runCli, show } from '../fixtures/run-cli.js';
import { treeDir } from '../sandbox/trees.js';

const { mock, dirs, run } = await cliSuite({ dirs: 'each', env: { SHELL: '/bin/sh' } });

/** A file outside the workspace (the CLI's working directory), and the command that writes it. */
function outside() {
  const dir = treeDir('clm-cli-outside-');
  const file = join(dir, 'target');
  return { file, command: `echo changed > ${file}` };
}

/** The last tool result request `i` carried to the model. */
const toolMessage = (i: number) => mock.posts[i]!.json.messages.findLast((m: { role: string }) => m.role === 'tool')?.content as string;

function sessionLines(): Record<string, unknown>[] {
  const files = readdirSync(dirs.sessions).filter((n) => n.endsWith('.jsonl'));
  assert.equal(files.length, 1);
  return readFileSync(join(dirs.sessions, files[0]!), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

// Top-level tests, each with its own deadline; they need a working bwrap.
const needsBwrap = bwrapOrSkip();

test('a refused write: the model is told why, json and the session file record the mode', needsBwrap, async () => {
  const o = outside();
  mock.push(oa.toolCall('shell_exec', { command: o.command }), oa.text('noted'));
  const r = await run(['-o', 'go', '--output-format', 'json']);
  assert.equal(r.code, 0, show(r));
  assert.ok(!existsSync(o.file));
  assert.match(
    toolMessage(1),
    /\(exit status [12]\)\n\[sandbox: write to \S+\/target refused \(workspace-write: outside the writable roots\)\]/,
  );
  const result = JSON.parse(r.stdout);
  assert.equal(result.tool_calls[0].sandbox, 'workspace-write');
  const runs = sessionLines().filter((l) => l.type === 'tool_run');
  assert.deepEqual(runs, [{ type: 'tool_run', id: result.tool_calls[0].id, tool: 'shell_exec', sandbox: 'workspace-write' }]);
});

test('--sandbox full runs it unconfined, and says so in the record', needsBwrap, async () => {
  const o = outside();
  mock.push(oa.toolCall('shell_exec', { command: o.command }), oa.text('done'));
  const r = await run(['-o', 'go', '--output-format', 'json', '--sandbox', 'full']);
  assert.equal(r.code, 0, show(r));
  assert.equal(readFileSync(o.file, 'utf8'), 'changed\n');
  assert.equal(JSON.parse(r.stdout).tool_calls[0].sandbox, 'full');
});

test('config.lua\'s sandbox = "read-only" (per profile, --sandbox over it); stream-json tells each call\'s mode', needsBwrap, async () => {
  dirs.write('config.lua', 'return { sandbox = "workspace-write", agents = { ro = { sandbox = "read-only" } } }');
  mock.push(oa.toolCall('shell_exec', { command: 'echo x > here.txt' }), oa.text('done'));
  const r = await run(['-o', 'go', '-a', 'ro', '--output-format', 'stream-json']);
  assert.equal(r.code, 0, show(r));
  assert.ok(!existsSync(join(dirs.root, 'here.txt')));
  assert.match(toolMessage(1), /\[sandbox: write to \S+\/here\.txt refused \(read-only\)\]/);
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(lines.find((l) => l.type === 'tool_sandbox')?.sandbox, 'read-only');
  mock.push(oa.toolCall('shell_exec', { command: 'echo x > here.txt' }), oa.text('done'));
  assert.equal((await run(['-o', 'go', '-a', 'ro', '--sandbox', 'workspace-write'])).code, 0);
  assert.equal(readFileSync(join(dirs.root, 'here.txt'), 'utf8'), 'x\n');
});

test('bad values are refused with the key or flag named', needsBwrap, async () => {
  const bad = await run(['-o', 'go', '--sandbox', 'open']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--sandbox: unknown mode 'open' \(read-only, workspace-write, full\)/);
  dirs.write('config.lua', 'return { sandbox = "yes" }');
  const cfg = await run(['-o', 'go']);
  assert.equal(cfg.code, 2);
  assert.match(cfg.stderr, /config\.lua:1: sandbox must be one of "read-only", "workspace-write", "full" \(got "yes"\)/);
});

test('clm sandbox check: exit 0 here with the version and the policy; 1 without bwrap, with the fix', needsBwrap, async () => {
  const check = (env: Record<string, string> = {}) =>
    runCli(['sandbox', 'check', '-p', dirs.empty], { dirs, env: { SHELL: '/bin/sh', ...env } });
  const ok = await check();
  assert.equal(ok.code, 0, show(ok));
  assert.match(ok.stdout, /^bubblewrap: \S+bwrap \(bubblewrap \d+\.\d+/m);
  assert.match(ok.stdout, /^mode: workspace-write \(the default\) — sandbox: workspace-write, no network$/m);
  assert.match(
    ok.stdout,
    /^protected \(never writable, even in the writable roots\):\n(.*\n)*\s+\S+\/config\/clm\/ \(clm's configuration\)$/m,
  );
  assert.match(ok.stdout, /^the sandbox works here$/m);
  const no = await check({ PATH: '/nonexistent' });
  assert.equal(no.code, 1, show(no));
  assert.match(no.stdout, /^bubblewrap: not found on PATH$/m);
  assert.match(no.stdout, /fix: install bubblewrap \(Debian, Ubuntu: apt-get install bubblewrap/);
  assert.match(no.stdout, /^mode: unavailable — workspace-write \(the default\) cannot be had here; shell commands run NOT sandboxed$/m);
});

test(
  'where the mode cannot be had: said once at start; the default runs NOT sandboxed, a chosen mode runs nothing',
  needsBwrap,
  async () => {
    const o = outside();
    mock.push(oa.toolCall('shell_exec', { command: o.command }), oa.text('done'));
    const r = await run(['-o', 'go', '--output-format', 'json'], { env: { PATH: '/nonexistent' } });
    assert.equal(r.code, 0, show(r));
    const notices = r.stderr.split('\n').filter((l) => l.includes('sandbox: workspace-write is not available'));
    assert.equal(notices.length, 1, r.stderr);
    assert.match(
      notices[0]!,
      /bwrap \(bubblewrap\) is not installed; shell commands run NOT sandboxed \(mode: unavailable\)\. Fix: install bubblewrap/,
    );
    assert.equal(readFileSync(o.file, 'utf8'), 'changed\n');
    assert.equal(JSON.parse(r.stdout).tool_calls[0].sandbox, 'unavailable');

    const o2 = outside();
    mock.push(oa.toolCall('shell_exec', { command: o2.command }), oa.text('done'));
    const chosen = await run(['-o', 'go', '--sandbox', 'workspace-write'], { env: { PATH: '/nonexistent' } });
    assert.equal(chosen.code, 0, show(chosen));
    assert.match(chosen.stderr, /shell commands will not run until it is \(or choose --sandbox full\)/);
    assert.ok(!existsSync(o2.file));
    assert.match(toolMessage(3), /sandbox: workspace-write is not available \(bwrap \(bubblewrap\) is not installed\); nothing was run/);
  },
);

test(
  'on a terminal: the question says how the call runs; allowed, the sandbox still refuses the write and says why',
  needsBwrap,
  async (t) => {
    const o = outside();
    mock.push(oa.toolCall('shell_exec', { command: o.command }), oa.text('finished'));
    const s = spawnPty(['-u', mock.base, '-p', dirs.empty, '-o', 'go'], {
      dirs,
      cols: 160,
      rows: 40,
      env: { SHELL: '/bin/sh', NO_COLOR: '1' },
    });
    t.after(() => s.dispose());
    await s.waitFor('sandbox: workspace-write, no network', 'how the call runs');
    s.type('y');
    await s.waitFor('finished', 'the reply');
    assert.equal((await s.exited).code, 0);
    assert.ok(!existsSync(o.file) || readFileSync(o.file, 'utf8') !== 'changed\n', 'the write outside the workspace was refused');
    assert.ok(!s.text().includes('outside the sandbox once'), 'a one-shot run does not ask to run it outside');
    assert.match(toolMessage(1), /\[sandbox: write to \S+\/target refused \(workspace-write: outside the writable roots\)\]/);
  },
);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How many times `text` is on the screen. */
const count = (screen: string, text: string) => screen.split(text).length - 1;
const OUTSIDE_Q = 'run this call outside the sandbox once? y/N';

for (const [front, extra] of [
  ['the screen', []],
  ['the REPL', ['-H']],
] as const)
  test(
    `${front}: a refused call may run outside once (y writes the file); (a) always does not answer that question; n leaves it refused`,
    needsBwrap,
    async (t) => {
      const o = outside();
      mock.push(
        oa.toolCall('shell_exec', { command: o.command }),
        oa.text('first done'),
        oa.toolCall('shell_exec', { command: o.command }),
        oa.text('second done'),
      );
      const s = spawnPty(['-u', mock.base, '-p', dirs.empty, ...extra], {
        dirs,
        cols: 200,
        rows: 50,
        env: { SHELL: '/bin/sh', NO_COLOR: '1' },
      });
      t.after(() => s.dispose());
      await s.waitFor(extra.length ? 'user> ' : '[sandbox: workspace-write]', 'the prompt');
      s.type('go\r');
      await s.waitFor('allow tool shell_exec', 'the permission question');
      s.type('a');
      // Its rules: one for the command, one for the file it writes; Enter keeps each.
      await s.waitFor('rule 1 of 2', 'the first rule (a) adds');
      s.type('\r');
      await s.waitFor('rule 2 of 2', 'the second');
      s.type('\r');
      await s.waitFor(OUTSIDE_Q, 'the question whether to run it outside');
      assert.match(
        s.text(),
        /\[sandbox: write to \S+\/target refused \(workspace-write: outside the writable roots\)\] — run this call outside the sandbox once\? y\/N/,
      );
      assert.match(s.text(), /\(y\) yes, this once {2}\(n\) no \(also Enter\)/);
      // A key answers a question only as the first of a run of typing begun after it showed.
      await sleep(TYPING_GAP_MS + 100);
      s.type('y');
      await s.waitFor('first done', 'the reply');
      assert.equal(readFileSync(o.file, 'utf8'), 'changed\n', 'it ran outside: the file is written');
      assert.match(toolMessage(1), /\[sandbox: this call ran outside the sandbox, allowed once\]$/);
      rmSync(o.file);

      // The same call again: the rule (a) kept allows it unasked; whether it may run outside is asked again.
      s.type('again\r');
      await s.waitFor((x) => count(x.text(), OUTSIDE_Q) === 2, 'the question asked again');
      assert.equal(count(s.text(), 'allow tool shell_exec'), 1, 'the call itself was allowed by the rule');
      await sleep(TYPING_GAP_MS + 100);
      s.type('n');
      await s.waitFor('second done', 'the reply');
      assert.ok(!existsSync(o.file), 'it stayed refused');
      assert.match(
        toolMessage(3),
        /\(exit status [12]\)\n\[sandbox: write to \S+\/target refused \(workspace-write: outside the writable roots\)\]\]$/,
      );
      const runs = sessionLines().filter((l) => l.type === 'tool_run');
      assert.deepEqual(
        runs.map((l) => l.sandbox),
        ['outside-once', 'workspace-write'],
      );
    },
  );

test('the screen: the status bar shows the mode, /sandbox the policy', needsBwrap, async (t) => {
  const s = spawnPty(['-u', mock.base, '-p', dirs.empty], { dirs, cols: 140, rows: 40, env: { SHELL: '/bin/sh' } });
  t.after(() => s.dispose());
  await s.waitFor('[sandbox: workspace-write]', 'the status bar');
  s.type('/sandbox\r');
  await s.waitFor('protected (never writable, even in the writable roots):', 'the policy');
  assert.match(s.text(), /mode: workspace-write \(the default\) — sandbox: workspace-write, no network/);
  assert.match(s.text(), /secrets\.lua \(clm's secrets\)/);
});
