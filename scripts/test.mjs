// `npm test`: rebuild the CLI bundle (so end-to-end tests run current code), type-check, run every test file.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_HINT, findChromium } from './chromium.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (args, opts = {}) => spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root, ...opts }).status ?? 1;

if (run(['scripts/build.mjs']) !== 0) process.exit(1);
if (run(['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit']) !== 0) process.exit(1);

const files = [];
const walk = (d) => {
  for (const n of readdirSync(d).sort()) {
    const p = join(d, n);
    if (statSync(p).isDirectory()) {
      if (n !== 'fixtures') walk(p);
    } else if (n.endsWith('.test.ts')) files.push(p);
  }
};
walk(join(root, 'test'));
const filter = process.argv.slice(2);
// Matched within the repository (test/…): a checkout's own directory name must not select every file.
let chosen = filter.length ? files.filter((f) => filter.some((x) => relative(root, f).includes(x))) : files;
// Tests that drive Chromium run where it is installed; CI sets CLM_REQUIRE_BROWSER, so there a
// missing browser fails them instead of leaving them out.
let missingNotice = '';
const needsBrowser = (f) => f.includes('chromium');
if (chosen.some(needsBrowser) && !process.env.CLM_REQUIRE_BROWSER && !findChromium()) {
  chosen = chosen.filter((f) => !needsBrowser(f));
  missingNotice = `# browser tests did not run: Chromium not found; to run them, ${CHROMIUM_HINT}`;
}
// The inline UI's test in a real tmux likewise (CI sets CLM_REQUIRE_TMUX).
const needsTmux = (f) => f.includes('tmux');
if (chosen.some(needsTmux) && !process.env.CLM_REQUIRE_TMUX && spawnSync('tmux', ['-V'], { stdio: 'ignore' }).status !== 0) {
  chosen = chosen.filter((f) => !needsTmux(f));
  missingNotice += `${missingNotice ? '\n' : ''}# the tmux test did not run: tmux not found; to run it, install tmux (Debian/Ubuntu: sudo apt-get install tmux)`;
}
if (!chosen.length) {
  console.log(missingNotice || '# no test file matches');
  process.exit(missingNotice ? 0 : 1);
}
// Every test has a deadline, so a broken timeout fails the run instead of hanging it. A test file
// runs as one test under that deadline too: one with several type-checks or npm installs takes
// minutes on a loaded 2-core machine, so the deadline is generous (a hang still ends the run).
const tallyDir = mkdtempSync(join(tmpdir(), 'clm-tally-'));
const tallyFile = join(tallyDir, 'tally');
const status = run(['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=360000', ...chosen], {
  env: { ...process.env, CLM_TEST_TALLY: tallyFile },
});
printTally(tallyFile);
if (missingNotice) console.log(missingNotice);
rmSync(tallyDir, { recursive: true, force: true });
process.exit(status);

/** Sums of what the reliability battery exercised (test/fixtures/tally.ts). */
function printTally(file) {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return;
  }
  const sums = new Map();
  for (const line of text.split('\n')) {
    const [kind, n] = line.split(' ');
    if (kind && n) sums.set(kind, (sums.get(kind) ?? 0) + Number(n));
  }
  if (sums.size) console.log(`# battery: ${[...sums].map(([k, n]) => `${k.replace('_', ' ')} ${n}`).join(', ')}`);
}
