import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileTool, writeFileTool, listDirTool, builtinTools, READ_DEFAULT_LIMIT } from '../../src/builtin-tools/index.js';
import { call } from './fake-inv.js';

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'clm-files-'));
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

const lines = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `line ${from + i}\n`).join('');

test('builtinTools: order, names, gates, schemas as the reference', () => {
  const tools = builtinTools();
  assert.deepEqual(
    tools.map((t) => t.name),
    ['read_file', 'write_file', 'list_dir', 'shell_exec', 'bg_exec'],
  );
  assert.deepEqual(
    tools.map((t) => !!t.noPrompt),
    [true, false, true, false, false],
  );
  assert.equal(readFileTool.description, 'read a window of lines from a text file');
  const props = (readFileTool.parameters as any).properties;
  assert.deepEqual(Object.keys(props), ['path', 'offset', 'limit']);
  assert.equal(props.offset.description, 'starting line, 1-indexed (default 1)');
  assert.equal(props.limit.description, 'max lines to return (default 200)');
  assert.equal(writeFileTool.description, 'write content to a file, overwriting it');
  assert.equal(listDirTool.description, "list a directory's entries, one per line, directories suffixed with '/'");
  const shell = tools[3]!;
  assert.equal((shell.parameters as any).properties.stdin.description, "optional: data to write to the command's standard input");
  assert.equal(shell.timeoutMs, 30_000);
  assert.ok(shell.timeoutOverridable && shell.outputCapOverridable);
  assert.match(tools[4]!.description!, /do not wait for it, continue with other work\.$/);
});

test('read_file: whole small file gets the plain footer', async () => {
  const p = join(dir, 'small.txt');
  writeFileSync(p, 'alpha\nbeta\n');
  const r = await call(readFileTool, { path: p }).result;
  assert.ok(r.ok);
  assert.equal(r.text, 'alpha\nbeta\n\n[lines 1-2 of 2]');
});

test('read_file: window with offset/limit says how to continue; last line without newline counts', async () => {
  const p = join(dir, 'many.txt');
  writeFileSync(p, lines(9) + 'line 10');
  let r = await call(readFileTool, { path: p, offset: 3, limit: 2 }).result;
  assert.equal(r.text, 'line 3\nline 4\n\n[lines 3-4 of 10; raise offset to continue]');
  r = await call(readFileTool, { path: p, offset: 9 }).result;
  assert.equal(r.text, 'line 9\nline 10\n[lines 9-10 of 10]');
  // offset < 1 ⇒ 1, limit < 1 ⇒ default, numeric strings accepted
  r = await call(readFileTool, { path: p, offset: -4, limit: 0 }).result;
  assert.match(r.text, /\[lines 1-10 of 10\]$/);
  r = await call(readFileTool, { path: p, offset: '2', limit: '1' }).result;
  assert.equal(r.text, 'line 2\n\n[lines 2-2 of 10; raise offset to continue]');
});

test('read_file: default limit is 200 lines', async () => {
  const p = join(dir, 'long.txt');
  writeFileSync(p, lines(250));
  const r = await call(readFileTool, { path: p }).result;
  assert.equal(READ_DEFAULT_LIMIT, 200);
  assert.match(r.text, /line 200\n\n\[lines 1-200 of 250; raise offset to continue\]$/);
  assert.ok(!r.text.includes('line 201'));
});

test("read_file: lines across the file's 64 KiB reads arrive whole and in order, each its own bytes", async () => {
  // Lines of differing lengths, so that many straddle a read's boundary; a window over four reads.
  const p = join(dir, 'chunks.txt');
  const all = Array.from({ length: 5000 }, (_, i) => `${i + 1} ${String.fromCharCode(97 + (i % 26)).repeat(i % 97)}\n`);
  writeFileSync(p, all.join(''));
  const r = await call(readFileTool, { path: p, offset: 700, limit: 3000 }, { outputCap: 1 << 20 }).result;
  assert.ok(r.ok);
  assert.equal(r.text, `${all.slice(699, 3699).join('')}\n[lines 700-3699 of 5000; raise offset to continue]`);
});

test('read_file: offset past the end is a success message', async () => {
  const p = join(dir, 'three.txt');
  writeFileSync(p, lines(3));
  const r = await call(readFileTool, { path: p, offset: 7 }).result;
  assert.ok(r.ok);
  assert.equal(r.text, '(file has 3 lines; offset 7 is past end)');
  const e = join(dir, 'empty.txt');
  writeFileSync(e, '');
  assert.equal((await call(readFileTool, { path: e }).result).text, '(file has 0 lines; offset 1 is past end)');
});

test('read_file: ~/ is expanded from $HOME', async () => {
  const home = join(dir, 'home');
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'notes.txt'), 'from home\n');
  const saved = process.env.HOME;
  process.env.HOME = home;
  try {
    const r = await call(readFileTool, { path: '~/notes.txt' }).result;
    assert.equal(r.text, 'from home\n\n[lines 1-1 of 1]');
  } finally {
    process.env.HOME = saved;
  }
});

test('read_file: errors', async () => {
  let r = await call(readFileTool, 'not json').result;
  assert.deepEqual([r.ok, r.text], [false, 'invalid arguments']);
  r = await call(readFileTool, '[1]').result;
  assert.equal(r.text, 'invalid arguments');
  r = await call(readFileTool, { offset: 3 }).result;
  assert.equal(r.text, "missing required string argument 'path'");
  const missing = join(dir, 'nope.txt');
  r = await call(readFileTool, { path: missing }).result;
  assert.deepEqual([r.ok, r.text], [false, `cannot open '${missing}': No such file or directory`]);
  r = await call(readFileTool, { path: dir }).result;
  assert.deepEqual([r.ok, r.text], [false, `cannot open '${dir}': Is a directory`]);
  r = await call(readFileTool, { path: '/dev/zero' }).result;
  assert.deepEqual([r.ok, r.text], [false, "cannot open '/dev/zero': Not a regular file (a pipe or device could block forever)"]);
});

test('read_file: no process environment (it holds CLM_API_KEY), by any path; other /proc files read', async () => {
  const refused = 'Permission denied (a process environment holds credentials)';
  const link = join(dir, 'env-link');
  symlinkSync(`/proc/${process.pid}/environ`, link);
  for (const path of ['/proc/self/environ', `/proc/${process.pid}/environ`, `/proc/thread-self/environ`, link]) {
    const r = await call(readFileTool, { path }).result;
    assert.deepEqual([r.ok, r.text], [false, `cannot open '${path}': ${refused}`]);
  }
  const r = await call(readFileTool, { path: '/proc/self/status' }).result;
  assert.ok(r.ok && r.text.includes('Name:'), r.text);
});

test('read_file: output cap is reached visibly, never silently', async () => {
  const p = join(dir, 'big.txt');
  writeFileSync(p, lines(100)); // ~800 bytes
  const r = await call(readFileTool, { path: p, limit: 100 }, { outputCap: 400 }).result;
  assert.ok(r.ok);
  assert.ok(Buffer.byteLength(r.text) <= 400, `${Buffer.byteLength(r.text)} bytes`);
  assert.match(r.text, /\n\[lines 1-\d+ of 100; output truncated at the 400-byte cap; raise offset to continue\]$/);
  const shown = Number(/\[lines 1-(\d+)/.exec(r.text)![1]);
  assert.equal(r.text.slice(0, r.text.indexOf('\n[')), lines(shown), 'the lines shown are not the file’s first ones');
});

test('read_file: a single line longer than the cap is cut on a character boundary and says so', async () => {
  const p = join(dir, 'wide.txt');
  writeFileSync(p, 'é'.repeat(1000) + '\nnext\n'); // 2000 bytes of 2-byte characters
  const r = await call(readFileTool, { path: p }, { outputCap: 301 }).result;
  assert.ok(r.ok);
  const head = r.text.slice(0, r.text.indexOf('\n['));
  assert.ok(/^é+$/.test(head), 'only whole characters');
  assert.ok(Buffer.byteLength(r.text) <= 301);
  assert.match(r.text, /\n\[line 1 of 2 is 2001 bytes; output truncated after the first \d+; raise offset to continue\]$/);
});

test('read_file: bytes are handed over unchanged (the core checks for binary data)', async () => {
  const p = join(dir, 'bin.dat');
  writeFileSync(p, Buffer.from([0x68, 0x69, 0x00, 0x89, 0x50, 0x0a]));
  const r = await call(readFileTool, { path: p }).result;
  assert.ok(r.bytes instanceof Uint8Array);
  assert.deepEqual([...r.bytes!.subarray(0, 6)], [0x68, 0x69, 0x00, 0x89, 0x50, 0x0a]);
});

test('write_file: creates and overwrites, with ~/ expansion', async () => {
  const p = join(dir, 'out.txt');
  let r = await call(writeFileTool, { path: p, content: 'hello' }).result;
  assert.deepEqual([r.ok, r.text], [true, 'ok: file written']);
  assert.equal(readFileSync(p, 'utf8'), 'hello');
  r = await call(writeFileTool, { path: p, content: 'hi' }).result;
  assert.equal(readFileSync(p, 'utf8'), 'hi');
  const saved = process.env.HOME;
  process.env.HOME = dir;
  try {
    await call(writeFileTool, { path: '~/tilde.txt', content: 'x' }).result;
    assert.equal(readFileSync(join(dir, 'tilde.txt'), 'utf8'), 'x');
  } finally {
    process.env.HOME = saved;
  }
});

test('write_file: errors', async () => {
  let r = await call(writeFileTool, '{').result;
  assert.equal(r.text, 'invalid arguments');
  r = await call(writeFileTool, { path: join(dir, 'x') }).result;
  assert.equal(r.text, "write_file requires 'path' and 'content' strings");
  const p = join(dir, 'no-such-dir', 'f.txt');
  r = await call(writeFileTool, { path: p, content: 'x' }).result;
  assert.deepEqual([r.ok, r.text], [false, `cannot write '${p}': No such file or directory`]);
});

test('list_dir: sorted bytewise, directories with "/", dot default, (empty)', async () => {
  const d = join(dir, 'tree');
  mkdirSync(join(d, 'sub'), { recursive: true });
  mkdirSync(join(d, 'Zed'));
  writeFileSync(join(d, 'b.txt'), '');
  writeFileSync(join(d, 'a.txt'), '');
  writeFileSync(join(d, '.hidden'), '');
  symlinkSync(join(d, 'sub'), join(d, 'link'));
  const r = await call(listDirTool, { path: d }).result;
  assert.ok(r.ok);
  assert.equal(r.text, '.hidden\nZed/\na.txt\nb.txt\nlink\nsub/\n');
  mkdirSync(join(d, 'sub', 'empty'));
  assert.equal((await call(listDirTool, { path: join(d, 'sub', 'empty') }).result).text, '(empty)');
  const cwd = process.cwd();
  process.chdir(d);
  try {
    assert.equal((await call(listDirTool, {}).result).text, '.hidden\nZed/\na.txt\nb.txt\nlink\nsub/\n');
    assert.equal((await call(listDirTool, '').result).text, '.hidden\nZed/\na.txt\nb.txt\nlink\nsub/\n');
  } finally {
    process.chdir(cwd);
  }
});

test('list_dir: errors and visible truncation', async () => {
  const missing = join(dir, 'missing');
  let r = await call(listDirTool, { path: missing }).result;
  assert.deepEqual([r.ok, r.text], [false, `cannot open '${missing}': No such file or directory`]);
  r = await call(listDirTool, '"x"').result;
  assert.equal(r.text, 'invalid arguments');
  const d = join(dir, 'wide');
  mkdirSync(d);
  for (let i = 0; i < 50; i++) writeFileSync(join(d, `file-${String(i).padStart(3, '0')}.txt`), '');
  r = await call(listDirTool, { path: d }, { outputCap: 300 }).result;
  assert.ok(Buffer.byteLength(r.text) <= 300);
  assert.match(r.text, /^file-000\.txt\n/);
  assert.match(r.text, /\n\[output truncated: \d+ of 50 entries not shown\]$/);
});

test('a FIFO is refused at once by read_file and write_file (open would block forever)', async () => {
  const { execFileSync } = await import('node:child_process');
  const fifo = join(dir, 'pipe');
  execFileSync('mkfifo', [fifo]);
  // An open that blocked would hang this file until the runner's deadline kills it.
  const r = await call(readFileTool, { path: fifo }).result;
  assert.equal(r.ok, false);
  assert.match(r.text, /cannot open '.*pipe': Not a regular file/);
  const w = await call(writeFileTool, { path: fifo, content: 'x' }).result;
  assert.equal(w.ok, false);
  assert.match(w.text, /cannot write '.*pipe': (Not a regular file|No such device or address)/);
});
