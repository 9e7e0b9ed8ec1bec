#!/usr/bin/env node
'use strict';
// The `clm` command. CommonJS on purpose: `clm -V` is answered before Node's ES module loader
// starts (about 12 ms on Node 20); everything else runs the bundled program in dist/cli.js.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '-V' || args[0] === '--version')) {
  process.stdout.write(`clm ${require('../package.json').version}\n`);
} else {
  import('../dist/cli.js').catch((e) => {
    process.stderr.write(`clm: cannot start: ${e?.message ? e.message : e}\n(run \`npm ci\` or \`npm run build\` first?)\n`);
    process.exit(1);
  });
}
