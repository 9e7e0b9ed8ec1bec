// How clm has V8 compile its WebAssembly: the event loop held while a compile is awaited (else a
// one-shot run's first shell command stalled behind V8's background tier-up, ~1 s), and the bash
// grammar kept on baseline code (else TurboFan spent ~1 s of CPU and ~40 MiB on its lexer).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { compileWasm, TIERING_BUDGETS } from '../../src/host/wasm-compile.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('a compile holds the event loop open until it settles, and lets go after', { timeout: 10_000 }, async () => {
  const before = timers();
  let during = -1;
  let later = -1;
  const value = await compileWasm(async () => {
    during = timers();
    // Still held after timers have had their turn (a compile takes many of the loop's turns).
    await new Promise((r) => setTimeout(r, 5));
    later = timers();
    return 7;
  });
  assert.equal(value, 7);
  assert.equal(during, before + 1);
  assert.equal(later, before + 1);
  assert.equal(timers(), before);
});

test('a compile that fails (thrown or rejected) lets go of the loop and passes the error on', { timeout: 10_000 }, async () => {
  const before = timers();
  await assert.rejects(
    compileWasm(() => {
      throw new Error('bad module');
    }),
    /bad module/,
  );
  await assert.rejects(
    compileWasm(() => Promise.reject(new Error('no bytes')), { tierUp: false }),
    /no bytes/,
  );
  assert.equal(timers(), before);
});

test('judging shell commands never has V8 optimize the bash grammar', { timeout: 120_000 }, () => {
  // Thirty commands, as a long one-shot run judges; V8 says which functions TurboFan compiled.
  const script = `import { shellParts } from './src/permissions/shell.ts';
for (let i = 0; i < 30; i++) await shellParts('seq 1 500 && for f in *.ts; do grep -n "x" "$f" > /tmp/o; done | sort');
console.log('parsed');`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--trace-wasm-compilation-times', '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 110_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /parsed/);
  // The grammar's lexer is one function of ~160 KB; its parse tables' helpers are KBs. Small
  // functions of other modules (Node's own) may tier up; nothing of the grammar's size may.
  const optimized = [...r.stdout.matchAll(/using TurboFan.*bodysize (\d+)/g)].map((m) => Number(m[1]));
  assert.deepEqual(
    optimized.filter((size) => size > 10_000),
    [] as number[],
    'a large grammar function was optimized',
  );
});

test('a code cache written while a compile keeps the budget raised is still accepted later', { timeout: 60_000 }, async (t) => {
  if (!(process.versions.v8.split('.')[0]! in TIERING_BUDGETS)) return t.skip('this V8 leaves the budget alone');
  const dir = mkdtempSync(join(tmpdir(), 'clm-flags-'));
  const src = 'function f() { return 42; } f();';
  // What a fresh Node says of a cache made here: whether V8 refused it.
  const refusedLater = (cache: Buffer): boolean => {
    const file = join(dir, 'cache.bin');
    writeFileSync(file, cache);
    const r = spawnSync(
      process.execPath,
      [
        '-e',
        `const vm = require('node:vm'); const s = new vm.Script(${JSON.stringify(src)}, { filename: 'x.js', cachedData: require('node:fs').readFileSync(${JSON.stringify(file)}) }); console.log(s.cachedDataRejected);`,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim() === 'true';
  };
  let release!: () => void;
  const compiling = compileWasm(() => new Promise<void>((r) => (release = r)), { tierUp: false });
  try {
    const script = new Script(src, { filename: 'x.js' });
    script.runInThisContext();
    assert.equal(refusedLater(script.createCachedData()), true, 'made with the budget raised, V8 refuses it');
    const hook = (globalThis as Record<symbol, (() => void) | undefined>)[Symbol.for('clm.before-code-cache')];
    assert.equal(typeof hook, 'function', 'no hook for the launcher while the budget is raised');
    hook!();
    assert.equal(refusedLater(script.createCachedData()), false);
  } finally {
    release();
    await compiling;
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal((globalThis as Record<symbol, unknown>)[Symbol.for('clm.before-code-cache')], undefined);
});
