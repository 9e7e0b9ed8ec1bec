// Build: tsc emits the library (ESM + .d.ts); esbuild bundles the CLI for start-up time.
//
// The CLI is one CommonJS script, dist/cli.cjs, that bin/clm.cjs runs through vm.Script with a
// V8 code cache (see there): one file to read, no ES module loader, and its parts that only one
// mode needs (the UI, Lua, MCP, config evaluation) are imported lazily, so esbuild wraps them in
// functions that run (and are compiled) only when imported. Its first line is the hash of the
// rest, which the code cache is checked against; the rest is one function expression the launcher
// calls with CommonJS's arguments and its own two. The worker threads' scripts (the Lua plugin
// runtime, config evaluation, highlighting long code) are bundles of their own; dist/cli.js runs
// the launcher, for scripts and tests that start `node dist/cli.js`.
//
// npm runs it as the checkout's `dependencies` script (after `npm ci` or an install changed
// node_modules) and as `prepack`: neither is a script npm runs when a user installs the package,
// so the published manifest asks nobody to allow an install script (npm 11.16 on warns of a
// `prepare` script there, npm 12 blocks it), and the package carries no sources to build anyway.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const onlyCli = process.argv.includes('--cli');
if (!onlyCli) {
  rmSync(dist, { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], {
    stdio: 'inherit',
    cwd: root,
  });
} else {
  // What earlier CLI builds left: chunks of a code-split bundle.
  mkdirSync(dist, { recursive: true });
  for (const f of readdirSync(dist)) if (/^chunk-[A-Z0-9]+\.js$/.test(f)) rmSync(join(dist, f));
}
const esbuild = await import('esbuild');
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  minify: true,
  legalComments: 'none',
  define: { 'process.env.NODE_ENV': '"production"' },
  // wasmoon and web-tree-sitter locate their .wasm files relative to themselves; the MCP SDK is
  // loaded only when configured.
  external: ['wasmoon', 'web-tree-sitter', '@modelcontextprotocol/*'],
  logLevel: 'warning',
};

/**
 * A CLI program, `dist/NAME.cjs`, from src/cli/main.ts: `program` is `whole` (every mode) or
 * `oneshot` (plain one-shot runs only: esbuild leaves out the paths that CLM_PROGRAM closes,
 * with every module only they import). import.meta.url is the bundle's URL, which the launcher
 * passes in. Returns the esbuild metafile's inputs.
 */
async function cliProgram(name, program) {
  const cli = await esbuild.build({
    ...common,
    entryPoints: [join(root, 'src/cli/main.ts')],
    outfile: join(dist, `${name}.cjs`),
    format: 'cjs',
    define: {
      ...common.define,
      'process.env.CLM_PROGRAM': JSON.stringify(program),
      'import.meta.url': '__clm_url',
      'import.meta.resolve': 'undefined',
    },
    write: false,
    metafile: true,
  });
  // ES modules are strict; the CommonJS output keeps that with a directive (esbuild writes one today).
  const out = cli.outputFiles[0].text;
  // import() of a package becomes the launcher's (see bin/clm.cjs); a template that builds a
  // worker's source (`import(${...})`) is not a call and stays.
  const strict = out.startsWith('"use strict";') ? out : `"use strict";\n${out}`;
  // The launcher reads the bundle as one-byte text, which skips decoding UTF-8 (~5 % of a start):
  // esbuild escapes what lies outside ASCII except in regular expression and template literals,
  // where a \uXXXX escape (one per UTF-16 unit) means the same (a template's cooked text; no tag
  // in the program reads the raw text).
  const code = strict
    .replace(/\bimport\((?=")/g, '__clm_import(')
    .replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (/\bimport\((?!\$\{)/.test(code)) throw new Error(`build: dist/${name}.cjs calls import() the launcher does not provide`);
  // The launcher compiles the file as it is: the function around the program is written here, since
  // one the launcher put around the text it read would be a second copy V8 makes of it all.
  const wrapped = `(function (exports, require, module, __filename, __dirname, __clm_url, __clm_import) {${code}\n})`;
  const hash = createHash('sha256').update(wrapped).digest('hex').slice(0, 32);
  writeFileSync(join(dist, `${name}.cjs`), `// clm-build ${hash}\n${wrapped}`);
  return Object.keys(Object.values(cli.metafile.outputs)[0].inputs);
}

await cliProgram('cli', 'whole');
// The one-shot program holds no screen: a module of the UI in it would be read at every one-shot.
const uiInOneshot = (await cliProgram('cli-oneshot', 'oneshot')).filter((f) =>
  /^src\/(tui|cli\/ui)\/|node_modules\/(marked|highlight\.js)\//.test(f),
);
if (uiInOneshot.length) throw new Error(`build: dist/cli-oneshot.cjs holds the UI's ${uiInOneshot.slice(0, 3).join(', ')}`);
writeFileSync(
  join(dist, 'cli.js'),
  "#!/usr/bin/env node\n// The clm command, for `node dist/cli.js`: see bin/clm.cjs.\nimport '../bin/clm.cjs';\n",
);
chmodSync(join(dist, 'cli.js'), 0o755);

// Worker threads: ES module bundles, started by URL next to dist/cli.cjs.
const workers = {
  'lua-worker': 'src/lua/worker.ts',
  'config-worker': 'src/config/eval-worker.ts',
  'highlight-worker': 'src/tui/highlight-worker.ts',
};
const entryPoints = Object.fromEntries(
  Object.entries(workers)
    .filter(([, src]) => existsSync(join(root, src)))
    .map(([k, src]) => [k, join(root, src)]),
);
await esbuild.build({ ...common, entryPoints, outdir: dist, format: 'esm' });
if (!onlyCli) execFileSync(process.execPath, [join(root, 'scripts/seed-cache.mjs')], { stdio: 'inherit', cwd: root });
