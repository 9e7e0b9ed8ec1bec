// Hand-made mutation testing: each mutant is one small change to the source (a flipped
// condition, a dropped call); the tests that should notice it run against the changed code, and
// a mutant that passes them all "survived" — a hole in the suite. Run from the repository root:
//   node scripts/mutants.mjs              every mutant
//   node scripts/mutants.mjs llm sse      only mutants whose id contains one of the words
//   node scripts/mutants.mjs --list       the mutants, without running anything
// The tests run from the TypeScript sources (tsx), so no rebuild is needed; the source file is
// restored after each run, also when the run is interrupted.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MUTANTS } from './mutants-list.mjs';

const root = process.env.MUTANTS_ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const list = args.includes('--list');
const words = args.filter((a) => !a.startsWith('--'));
const chosen = MUTANTS.filter((m) => !words.length || words.some((w) => m.id.includes(w)));

if (list) {
  for (const m of chosen) console.log(`${m.id.padEnd(28)} ${m.file}  ${m.what}`);
  process.exit(0);
}

let restore = null;
const onSignal = () => {
  restore?.();
  process.exit(130);
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const results = [];
for (const m of chosen) {
  const path = join(root, m.file);
  const orig = readFileSync(path, 'utf8');
  const n = orig.split(m.from).length - 1;
  if (n !== 1) {
    console.log(`${m.id}: the text to change occurs ${n} times in ${m.file}; skipped`);
    results.push({ m, verdict: 'stale' });
    continue;
  }
  const tests = m.tests.filter((t) => existsSync(join(root, t)));
  restore = () => writeFileSync(path, orig);
  writeFileSync(path, orig.replace(m.from, m.to));
  const t0 = Date.now();
  let r;
  try {
    r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=60000', ...tests], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
  } finally {
    restore();
    restore = null;
  }
  const s = ((Date.now() - t0) / 1000).toFixed(0);
  const fail = /^# fail (\d+)/m.exec(r.stdout ?? '')?.[1] ?? '?';
  const verdict = r.status === 0 ? 'SURVIVED' : 'killed';
  results.push({ m, verdict });
  console.log(`${m.id.padEnd(28)} ${verdict.padEnd(8)} (${fail} failing, ${s} s)  ${m.what}`);
}
const survived = results.filter((r) => r.verdict === 'SURVIVED');
console.log(
  `\n${results.length} mutants: ${results.filter((r) => r.verdict === 'killed').length} killed, ${survived.length} survived${survived.length ? ` (${survived.map((r) => r.m.id).join(', ')})` : ''}`,
);
