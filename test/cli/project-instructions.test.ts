// Project instructions end to end: the AGENTS.md files (CLAUDE.md where a directory has none) from
// the working directory up to the repository root and the user's own in the config directory, in
// the system prompt the real clm sends to the loopback mock LLM, farthest first; the cap and what
// it cut; `agents_md = false`; a change picked up at the next turn while an unchanged prompt
// stays byte for byte; the UI's line and /context.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { cliSuite } from '../fixtures/cli-suite.js';
import { show, waitFor, type CliDirs } from '../fixtures/run-cli.js';
import { spawnPty } from '../fixtures/pty-screen.js';
import { withoutSandboxNotice } from '../fixtures/bwrap.js';

const { mock, dirs, run, spawn } = await cliSuite({ dirs: 'each' });

/** outer/AGENTS.md (outside the repository), outer/repo/.git, repo/AGENTS.md, repo/sub/CLAUDE.md, the user's AGENTS.md. */
function tree(d: CliDirs): { repo: string; sub: string } {
  const outer = join(d.root, 'outer');
  const repo = join(outer, 'repo');
  const sub = join(repo, 'sub');
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(sub, { recursive: true });
  writeFileSync(join(outer, 'AGENTS.md'), 'OUTSIDE-THE-REPO\n');
  writeFileSync(join(repo, 'AGENTS.md'), 'ROOT-RULE: use tabs\n');
  writeFileSync(join(sub, 'CLAUDE.md'), 'SUB-RULE: use spaces\n');
  d.write('AGENTS.md', 'USER-RULE: be brief\n');
  return { repo, sub };
}

const systemOf = (i: number): string => mock.posts[i]!.json.messages[0].content;

test('-o: the user file, the root, then the nearest (CLAUDE.md where no AGENTS.md); nothing above the repository', async () => {
  const { sub } = tree(dirs);
  mock.push(oa.text('ok'));
  const r = await run(['-o', 'hi'], { cwd: sub });
  assert.equal(r.code, 0, show(r));
  const sys = systemOf(0);
  const at = (s: string) => sys.indexOf(s);
  assert.ok(at('USER-RULE') > 0 && at('USER-RULE') < at('ROOT-RULE') && at('ROOT-RULE') < at('SUB-RULE'), sys);
  assert.ok(sys.includes(join(sub, 'CLAUDE.md')), 'the model is told where each file is');
  assert.ok(!sys.includes('OUTSIDE-THE-REPO'), sys);
  assert.ok(sys.startsWith('You are a helpful assistant.'), 'after the base prompt');
  assert.equal(withoutSandboxNotice(r.stderr).includes('notice'), false, show(r));
});

test('outside a repository only the working directory is read; AGENTS.md wins over CLAUDE.md there', async () => {
  const work = join(dirs.root, 'work');
  mkdirSync(work);
  writeFileSync(join(work, 'AGENTS.md'), 'AGENTS-HERE\n');
  writeFileSync(join(work, 'CLAUDE.md'), 'CLAUDE-HERE\n');
  writeFileSync(join(dirs.root, 'AGENTS.md'), 'PARENT\n');
  mock.push(oa.text('ok'));
  const r = await run(['-o', 'hi'], { cwd: work });
  assert.equal(r.code, 0, show(r));
  const sys = systemOf(0);
  assert.ok(sys.includes('AGENTS-HERE') && !sys.includes('CLAUDE-HERE') && !sys.includes('PARENT'), sys);
});

test('the cap keeps the nearest files whole and says what it cut; agents_md = false reads none', async () => {
  const { sub } = tree(dirs);
  writeFileSync(join(dirs.root, 'outer/repo/AGENTS.md'), `ROOT-START ${'r'.repeat(300)} ROOT-END\n`);
  dirs.write('config.lua', 'return { agents_md_max_bytes = 120 }\n');
  mock.push(oa.text('ok'));
  const r = await run(['-o', 'hi'], { cwd: sub });
  assert.equal(r.code, 0, show(r));
  const sys = systemOf(0);
  assert.ok(sys.includes('SUB-RULE: use spaces'), 'the nearest whole');
  assert.ok(sys.includes('ROOT-START') && !sys.includes('ROOT-END'), 'the root cut');
  assert.ok(!sys.includes('USER-RULE'), 'the farthest left out');
  assert.match(r.stderr, /project instructions: \.\.\/AGENTS\.md cut to its first \d+ of 321 bytes \(agents_md_max_bytes = 120\)/, show(r));
  assert.ok(r.stderr.includes(`project instructions: ${join(dirs.clm, 'AGENTS.md')} left out`), show(r));

  dirs.write('config.lua', 'return { agents_md = false }\n');
  mock.push(oa.text('ok'));
  const off = await run(['-o', 'hi'], { cwd: sub });
  assert.equal(off.code, 0, show(off));
  assert.ok(!systemOf(1).includes('RULE'), systemOf(1));
});

test('an AGENTS.md that is a FIFO is named and skipped (no hang); CLAUDE.md is not read in its place', async () => {
  const work = join(dirs.root, 'work');
  mkdirSync(work);
  execFileSync('mkfifo', [join(work, 'AGENTS.md')]);
  writeFileSync(join(work, 'CLAUDE.md'), 'CLAUDE-HERE\n');
  mock.push(oa.text('ok'));
  const r = await run(['-o', 'hi'], { cwd: work });
  assert.equal(r.code, 0, show(r));
  assert.match(r.stderr, /project instructions: AGENTS\.md not read \(.*regular file.*\)/, show(r));
  assert.ok(!systemOf(0).includes('CLAUDE-HERE'));
});

test('REPL: an edited AGENTS.md is read at the next turn; unchanged, the system prompt is the same bytes', async () => {
  const { repo, sub } = tree(dirs);
  mock.script(() => oa.text('fine'));
  const c = spawn(['-H'], { cwd: sub, keepStdin: true });
  c.child.stdin!.write('one\n');
  await waitFor(() => mock.posts.length === 1 && c.stdout.includes('fine'), 'the first turn');
  c.child.stdin!.write('two\n');
  await waitFor(() => (c.stdout.match(/fine/g) ?? []).length === 2, 'the second turn');
  writeFileSync(join(repo, 'AGENTS.md'), 'ROOT-RULE: use tabs, always\n');
  c.child.stdin!.write('three\n');
  await waitFor(() => (c.stdout.match(/fine/g) ?? []).length === 3, 'the third turn');
  c.child.stdin!.end('quit\n');
  const r = await c.result;
  assert.equal(r.code, 0, show(r));
  assert.equal(systemOf(1), systemOf(0), 'unchanged: byte for byte');
  assert.ok(!systemOf(1).includes('always'));
  assert.ok(systemOf(2).includes('ROOT-RULE: use tabs, always'), systemOf(2));
  assert.ok(r.stdout.includes(`instructions: ${join(dirs.clm, 'AGENTS.md')}, ../AGENTS.md, CLAUDE.md\n`), r.stdout);
  assert.match(r.stderr, /notice: project instructions changed; in use now: /);
});

test('the UI says which files are in use; /context lists them with their sizes', async (t) => {
  const { sub } = tree(dirs);
  dirs.write('config.lua', `return { model = "m/x", providers = { m = { url = "${mock.base}" } } }\n`);
  const s = spawnPty(['-p', dirs.empty], { dirs, cols: 100, rows: 30, cwd: sub });
  t.after(() => s.dispose());
  await s.waitFor(`[instructions: ${join(dirs.clm, 'AGENTS.md')}, ../AGENTS.md, CLAUDE.md]`, 'the line under the banner');
  s.type('/context\r');
  await s.waitFor('project instructions (the nearest last', '/context');
  const text = s.text();
  assert.match(text, /clm\/AGENTS\.md\s+20 bytes/);
  assert.match(text, /\.\.\/AGENTS\.md\s+20 bytes/);
  assert.match(text, /CLAUDE\.md\s+21 bytes/);
  assert.match(text, /system prompt: \d+ bytes/);
});
