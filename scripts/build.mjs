// Build: tsc emits the library (ESM + .d.ts); esbuild bundles the CLI into one file for start-up time.
import { execFileSync } from 'node:child_process';
import { rmSync, chmodSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const onlyCli = process.argv.includes('--cli');
if (!onlyCli) {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
}
const esbuild = await import('esbuild');
const common = {
  bundle: true, platform: 'node', format: 'esm', target: 'node20', minify: true, legalComments: 'none',
  define: { 'process.env.NODE_ENV': '"production"' },
  // wasmoon carries a .wasm file it locates relative to itself; MCP is loaded only when configured.
  external: ['wasmoon', '@modelcontextprotocol/*'],
  logLevel: 'warning',
};
const entries = [
  { in: 'src/cli/main.ts', out: 'dist/cli.js', banner: '#!/usr/bin/env node' },
];
if (existsSync(join(root, 'src/lua/worker.ts'))) entries.push({ in: 'src/lua/worker.ts', out: 'dist/lua-worker.js' });
for (const e of entries) {
  await esbuild.build({ ...common, entryPoints: [join(root, e.in)], outfile: join(root, e.out), banner: e.banner ? { js: e.banner } : undefined });
}
chmodSync(join(root, 'dist/cli.js'), 0o755);
