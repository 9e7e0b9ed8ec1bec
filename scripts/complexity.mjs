// `npm run check`, second half: functions in src/ over Biome's cognitive complexity limit (15).
// The ones there today are counted per file in scripts/complexity-debt.json; a file may hold no
// more of them than its count says, and one not listed none. When a file's count goes down, its
// entry must go down with it, so the list only shrinks. Counted per file, not per line, so edits
// that move a function do not touch the list.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const listFile = join(root, 'scripts/complexity-debt.json');
const RULE = 'complexity/noExcessiveCognitiveComplexity';

const r = spawnSync(
  process.execPath,
  [join(root, 'node_modules/@biomejs/biome/bin/biome'), 'lint', `--only=${RULE}`, '--reporter=json', '--max-diagnostics=none', 'src'],
  { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
);
let report;
try {
  report = JSON.parse(r.stdout);
} catch {
  console.error(`complexity: biome gave no report (exit ${r.status}): ${r.stderr.trim() || r.stdout.slice(0, 500)}`);
  process.exit(1);
}
/** @type {Record<string, string[]>} */
const found = {};
for (const d of report.diagnostics) {
  if (d.category !== `lint/${RULE}`) continue;
  const score = /complexity of (\d+)/.exec(d.message)?.[1] ?? '?';
  (found[d.location.path] ??= []).push(`line ${d.location.start.line} (${score})`);
}

if (process.argv.includes('--write')) {
  const out = Object.fromEntries(
    Object.keys(found)
      .sort()
      .map((f) => [f, found[f].length]),
  );
  writeFileSync(listFile, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`complexity: wrote ${Object.keys(out).length} files, ${Object.values(out).reduce((a, b) => a + b, 0)} functions`);
  process.exit(0);
}

/** @type {Record<string, number>} */
const allowed = JSON.parse(readFileSync(listFile, 'utf8'));
const problems = [];
for (const [file, where] of Object.entries(found)) {
  const may = allowed[file] ?? 0;
  if (where.length > may)
    problems.push(`${file}: ${where.length} functions over the limit (${where.join(', ')}), ${may} allowed: split the new one up`);
}
for (const [file, may] of Object.entries(allowed)) {
  const has = found[file]?.length ?? 0;
  if (has < may)
    problems.push(`${file}: ${has} functions over the limit now, the list says ${may}: lower it in scripts/complexity-debt.json`);
}
const total = Object.values(found).reduce((a, w) => a + w.length, 0);
if (problems.length) {
  console.error(`complexity (Biome's cognitive complexity limit, 15):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`complexity: ${total} functions over the limit in ${Object.keys(found).length} files, as listed (the list only shrinks)`);
