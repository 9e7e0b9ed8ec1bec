// Prompt commands and file mentions end to end, through the real clm against the loopback mock
// LLM, with real files: `/NAME args` from `commands/*.md` (the user's config directory and the
// workspace's `.clm/commands/`) in -o and the REPL, `@path` attachments with their caps and
// notices, secrets masked in what is attached, and a resumed session showing what was typed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { cliSuite, sessionIdOf } from '../fixtures/cli-suite.js';
import { show } from '../fixtures/run-cli.js';
import { MENTION_FILE_BYTES, MENTIONS_MARKER } from '../../src/cli/file-mentions.js';

const { mock, dirs, run } = await cliSuite({ dirs: 'each', script: () => oa.text('done') });

/** A workspace with src/a.ts, docs/{x.md,y/}, and the commands of both places. */
function workspace(): string {
  const ws = join(dirs.root, 'ws');
  mkdirSync(join(ws, 'src'), { recursive: true });
  mkdirSync(join(ws, 'docs/y'), { recursive: true });
  mkdirSync(join(ws, '.clm/commands'), { recursive: true });
  writeFileSync(join(ws, 'src/a.ts'), 'export const A = 1;\n');
  writeFileSync(join(ws, 'docs/x.md'), '# x\n');
  dirs.write('commands/review.md', '---\ndescription: "review a file"\n---\nReview $1 carefully. All: $ARGUMENTS\n');
  writeFileSync(join(ws, '.clm/commands/review.md'), 'the workspace review, hidden by the user one\n');
  writeFileSync(join(ws, '.clm/commands/fix.md'), 'Fix the failing tests.\n');
  return ws;
}

const lastUser = () => oa.lastMessage(mock.posts.at(-1)!.json).content as string;

test('-o: a prompt command fills $1 and $ARGUMENTS; the user command hides the workspace one; without placeholders the arguments follow', async () => {
  const ws = workspace();
  let r = await run(['-o', '/review src/a.ts "two words"'], { cwd: ws });
  assert.equal(r.code, 0, show(r));
  assert.equal(lastUser(), 'Review src/a.ts carefully. All: src/a.ts "two words"\n');
  r = await run(['-o', '/fix only the parser'], { cwd: ws });
  assert.equal(r.code, 0, show(r));
  assert.equal(lastUser(), 'Fix the failing tests.\n\nonly the parser');
  r = await run(['-o', '/nosuch thing'], { cwd: ws });
  assert.equal(lastUser(), '/nosuch thing', 'not a command: sent as typed');
});

test('-o: @mentions attach files and directory listings after the prompt; caps, binaries, FIFOs and missing paths are said', async () => {
  const ws = workspace();
  writeFileSync(join(ws, 'big.log'), 'L'.repeat(MENTION_FILE_BYTES + 100));
  writeFileSync(join(ws, 'bin.dat'), Buffer.from([1, 2, 0, 3]));
  execFileSync('mkfifo', [join(ws, 'pipe')]);
  const prompt = 'explain @src/a.ts and @docs, then @big.log, @bin.dat @pipe @nope/x.ts @someone';
  const r = await run(['-o', prompt], { cwd: ws });
  assert.equal(r.code, 0, show(r));
  const sent = lastUser();
  assert.ok(sent.startsWith(`${prompt}${MENTIONS_MARKER}`), sent.slice(0, 300));
  assert.ok(sent.includes('<file path="src/a.ts">\nexport const A = 1;\n\n</file>'), sent);
  assert.ok(sent.includes('<directory path="docs">\nx.md\ny/\n</directory>'), 'the trailing comma is not part of the path');
  assert.ok(sent.includes(`[cut: the first ${MENTION_FILE_BYTES} of ${MENTION_FILE_BYTES + 100} bytes]`));
  assert.ok(!sent.includes('bin.dat">') && !sent.includes('pipe">'));
  assert.match(r.stderr, /notice: attached src\/a\.ts \(20 bytes\), docs \(2 entries\), big\.log \(65636 bytes, 65536 attached\)/);
  assert.match(r.stderr, /notice: @big\.log: attached its first 65536 of 65636 bytes/);
  assert.match(r.stderr, /notice: @bin\.dat: a binary file; not attached/);
  assert.match(r.stderr, /notice: @pipe: not attached \(Not a regular file/);
  assert.match(r.stderr, /notice: @nope\/x\.ts: no such file or directory; sent as typed/);
  assert.ok(!/@someone/.test(r.stderr), 'a bare word that names nothing is just text');
});

test("the run's secrets are masked in what is attached", async () => {
  const ws = workspace();
  writeFileSync(join(ws, 'env.txt'), 'KEY=sk-live-abcdef0123456789\n');
  const r = await run(['-o', 'check @env.txt'], { cwd: ws, env: { CLM_API_KEY: 'sk-live-abcdef0123456789' } });
  assert.equal(r.code, 0, show(r));
  assert.ok(lastUser().includes('KEY=[REDACTED]'), lastUser());
  assert.ok(!mock.posts.at(-1)!.body.includes('sk-live-abcdef0123456789'));
});

test('REPL: prompt commands and mentions work there too; a resumed session shows the prompt as typed', async () => {
  const ws = workspace();
  const r = await run(['-H'], { cwd: ws, input: '/review src/a.ts\nlook at @src/a.ts\n' });
  assert.equal(r.code, 0, show(r));
  assert.equal(mock.posts.length, 2);
  assert.match(oa.lastMessage(mock.posts[0]!.json).content, /^Review src\/a\.ts carefully/);
  assert.ok(lastUser().includes('<file path="src/a.ts">'));
  const id = sessionIdOf(r);
  const again = await run(['-H', '-r', id], { cwd: ws, input: '' });
  assert.equal(again.code, 0, show(again));
  assert.match(again.stdout, /^user> look at @src\/a\.ts$/m);
  assert.ok(!again.stdout.includes('export const A'), again.stdout);
});
