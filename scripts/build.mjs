// Build: tsc emits the library (ESM + .d.ts); esbuild bundles the CLI for start-up time.
import { execFileSync } from 'node:child_process';
import { rmSync, chmodSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const onlyCli = process.argv.includes('--cli');
if (!onlyCli) {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], {
    stdio: 'inherit',
    cwd: root,
  });
}
const esbuild = await import('esbuild');
// Code splitting: modules the CLI imports lazily (Lua, config, MCP, the REPL) become chunks that
// load only on the paths that need them, with their external packages. Chunks sit next to
// cli.js so relative URLs (the Lua worker script) resolve the same from any of them.
const entryPoints = { cli: join(root, 'src/cli/main.ts') };
if (existsSync(join(root, 'src/lua/worker.ts'))) entryPoints['lua-worker'] = join(root, 'src/lua/worker.ts');
if (existsSync(join(root, 'src/config/eval-worker.ts'))) entryPoints['config-worker'] = join(root, 'src/config/eval-worker.ts');
await esbuild.build({
  entryPoints,
  outdir: join(root, 'dist'),
  splitting: true,
  chunkNames: 'chunk-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  legalComments: 'none',
  define: { 'process.env.NODE_ENV': '"production"' },
  // wasmoon locates its .wasm file relative to itself; the MCP SDK is loaded only when configured.
  external: ['wasmoon', '@modelcontextprotocol/*'],
  banner: { js: '#!/usr/bin/env node' },
  logLevel: 'warning',
});
chmodSync(join(root, 'dist/cli.js'), 0o755);
if (!onlyCli) execFileSync(process.execPath, [join(root, 'scripts/seed-cache.mjs')], { stdio: 'inherit', cwd: root });
