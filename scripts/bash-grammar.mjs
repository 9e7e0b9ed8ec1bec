// The vendored bash grammar (vendor/tree-sitter-bash): re-derived from its npm package and
// checked, or taken anew from another version.
//
//   node scripts/bash-grammar.mjs                  fetch the recorded version, check that the
//                                                  tarball, the record and the files here agree
//   node scripts/bash-grammar.mjs --update VERSION take VERSION: rewrite the files and the record
//
// The package is fetched with `npm pack` (the registry npm is set up for); nothing of it runs.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'vendor', 'tree-sitter-bash');
const recordPath = join(dir, 'source.json');
const record = JSON.parse(readFileSync(recordPath, 'utf8'));
const FILES = ['tree-sitter-bash.wasm', 'LICENSE'];
const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

const args = process.argv.slice(2);
const update = args[0] === '--update';
if ((update && args.length !== 2) || (!update && args.length)) {
  console.error('usage: node scripts/bash-grammar.mjs [--update VERSION]');
  process.exit(2);
}
const version = update ? args[1] : record.version;

const tmp = mkdtempSync(join(tmpdir(), 'clm-bash-grammar-'));
try {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const packed = execFileSync(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp, `${record.package}@${version}`], {
    cwd: tmp,
    encoding: 'utf8',
  });
  const info = JSON.parse(packed)[0];
  execFileSync('tar', ['-xzf', join(tmp, info.filename), '-C', tmp, ...FILES.map((f) => `package/${f}`)]);
  const got = Object.fromEntries(FILES.map((f) => [f, sha256(join(tmp, 'package', f))]));
  if (update) {
    for (const f of FILES) copyFileSync(join(tmp, 'package', f), join(dir, f));
    writeFileSync(recordPath, `${JSON.stringify({ package: record.package, version, integrity: info.integrity, sha256: got }, null, 2)}\n`);
    console.log(`vendor/tree-sitter-bash: ${record.package}@${version} taken; run the permission tests`);
  } else {
    const problems = [];
    if (info.integrity !== record.integrity)
      problems.push(`the tarball's integrity is ${info.integrity}, the record says ${record.integrity}`);
    for (const f of FILES) {
      if (got[f] !== record.sha256[f]) problems.push(`${f} in the package has sha256 ${got[f]}, the record says ${record.sha256[f]}`);
      const here = sha256(join(dir, f));
      if (here !== record.sha256[f]) problems.push(`vendor/tree-sitter-bash/${f} has sha256 ${here}, the record says ${record.sha256[f]}`);
    }
    if (problems.length) {
      for (const p of problems) console.error(`bash-grammar: ${p}`);
      process.exit(1);
    }
    console.log(`vendor/tree-sitter-bash: the files are ${record.package}@${version}'s, byte for byte`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
