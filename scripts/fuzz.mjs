// `npm run fuzz`: the fuzz properties of test/fuzz/ (and the Lua JSON ones) with many more cases
// than CI runs and a fresh seed, printed so a failure can be replayed:
//   node scripts/fuzz.mjs                 scale 20, a random seed
//   CLM_FUZZ_SCALE=100 node scripts/fuzz.mjs
//   CLM_FUZZ_SEED=12345 node scripts/fuzz.mjs   replay one seed
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const seed = process.env.CLM_FUZZ_SEED ?? String(Math.floor(Math.random() * 2 ** 31));
const scale = process.env.CLM_FUZZ_SCALE ?? '20';
const files = readdirSync(join(root, 'test/fuzz'))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => join(root, 'test/fuzz', f));
const dir = mkdtempSync(join(tmpdir(), 'clm-fuzz-'));
const tallyFile = join(dir, 'tally');
console.log(`fuzz: seed ${seed}, scale ${scale} (replay with CLM_FUZZ_SEED=${seed} CLM_FUZZ_SCALE=${scale})`);
const t0 = Date.now();
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=1800000', ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, CLM_FUZZ_SEED: seed, CLM_FUZZ_SCALE: scale, CLM_TEST_TALLY: tallyFile },
});
let cases = 0;
try {
  for (const l of readFileSync(tallyFile, 'utf8').split('\n')) if (l.startsWith('fuzz ')) cases += Number(l.slice(5));
} catch {
  /* none ran */
}
rmSync(dir, { recursive: true, force: true });
console.log(`fuzz: ${cases} cases in ${((Date.now() - t0) / 1000).toFixed(0)} s, seed ${seed}`);
process.exit(r.status ?? 1);
