// bin/clm.cjs, the installed command: answers -V itself, hands everything else to dist/cli.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'bin/clm.cjs');
const run = promisify(execFile);

test('clm -V from the launcher prints the package version', async () => {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const { stdout } = await run(process.execPath, [bin, '--version']);
  assert.equal(stdout, `clm ${version}\n`);
});

test('the launcher runs the program for everything else (help, usage errors with exit 2)', async () => {
  const { stdout } = await run(process.execPath, [bin, '-h']);
  assert.match(stdout, /^usage: clm \[options\]/);
  await assert.rejects(run(process.execPath, [bin, '--bogus']), (e: any) => e.code === 2 && /unknown option --bogus/.test(e.stderr));
});

test('package.json points the clm command at the launcher', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  assert.equal(pkg.bin.clm, 'bin/clm.cjs');
  assert.ok(pkg.files.includes('bin'));
});

test('the programs are ASCII, so the launcher may read them as one-byte text', () => {
  for (const program of ['dist/cli.cjs', 'dist/cli-oneshot.cjs']) {
    const bytes = readFileSync(join(root, program));
    const at = bytes.findIndex((b) => b > 0x7f);
    assert.equal(
      at,
      -1,
      `${program}: a non-ASCII byte at ${at}: ${JSON.stringify(bytes.subarray(Math.max(0, at - 40), at + 20).toString('utf8'))}`,
    );
  }
});
