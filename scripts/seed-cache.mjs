// Build step: load the packaged seed plugins once and record the tools they register, so a
// first run of `clm` need not wait for the Lua worker before its first request (see
// src/cli/plugin-tools.ts). Uses tsc's output in dist/.
import { writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => new URL(`file://${join(root, 'dist', p)}`).href;
const { loadPlugins, seedPluginDir } = await import(dist('lua/index.js'));
const { builtinTools } = await import(dist('builtin-tools/index.js'));
const { fingerprint, describe, SHIPPED_CACHE } = await import(dist('cli/plugin-tools.js'));

const opts = { dirs: [seedPluginDir()], reservedNames: builtinTools().map((t) => t.name), toolsConfig: {} };
const host = await loadPlugins(opts);
try {
  if (host.errors.length) throw new Error(`seed plugins failed to load: ${host.errors.map((e) => `${e.plugin}: ${e.message}`).join('; ')}`);
  const entry = { tools: host.tools.map(describe), errors: [] };
  writeFileSync(join(root, 'dist', SHIPPED_CACHE), JSON.stringify({ version: 2, entries: { [fingerprint(opts)]: entry } }));
} finally {
  await host.close();
}
