// read_file over a large file (issue 27): a 200-line window near the end of a 51 MB file of
// 800,000 lines, so the scan of every line before the window and the count of those after it is
// the figure, through the tool as built in dist/. Medians of RUNS calls in this process, after a
// warm-up call. Usage: node bench/read-file.mjs [--quick]

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = process.argv.includes('--quick') ? 3 : 9;
const { readFileTool } = await import(pathToFileURL(join(root, 'dist/builtin-tools/read-file.js')).href);

const LINES = 800_000;
const dir = mkdtempSync(join(tmpdir(), 'clm-bench-read-'));
const file = join(dir, 'big.txt');
writeFileSync(file, `${'x'.repeat(63)}\n`.repeat(LINES));

/** One call of the tool, resolved with its time in ms. */
function timed(args) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    readFileTool.invoke({
      args: JSON.stringify(args),
      outputCap: 1 << 20,
      signal: new AbortController().signal,
      complete: () => resolve(performance.now() - t0),
      fail: (m) => reject(new Error(m)),
      notify() {},
      progress() {},
    });
  });
}

try {
  const args = { path: file, offset: 700_000, limit: 200 };
  await timed(args);
  const ms = [];
  for (let i = 0; i < RUNS; i++) ms.push(await timed(args));
  ms.sort((a, b) => a - b);
  const med = ms[(ms.length - 1) >> 1];
  const mb = (64 * LINES) / 1e6;
  process.stdout.write(
    `read_file over a large file (bench/read-file.mjs): lines 700000-700199 of an ${LINES}-line file (${mb.toFixed(1)} MB): median ${med.toFixed(1)} ms, min ${ms[0].toFixed(1)} ms (${(mb / (med / 1000)).toFixed(0)} MB/s)\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
