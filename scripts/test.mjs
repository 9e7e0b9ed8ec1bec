// `npm test`: rebuild the CLI bundle (so end-to-end tests run current code), type-check, run every test file.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (args, opts = {}) => spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root, ...opts }).status ?? 1;

if (run(['scripts/build.mjs']) !== 0) process.exit(1);
if (run(['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit']) !== 0) process.exit(1);

const files = [];
const walk = (d) => { for (const n of readdirSync(d).sort()) { const p = join(d, n); if (statSync(p).isDirectory()) { if (n !== 'fixtures') walk(p); } else if (n.endsWith('.test.ts')) files.push(p); } };
walk(join(root, 'test'));
const filter = process.argv.slice(2);
const chosen = filter.length ? files.filter((f) => filter.some((x) => f.includes(x))) : files;
process.exit(run(['--import', 'tsx', '--test', '--test-concurrency=2', ...chosen]));
