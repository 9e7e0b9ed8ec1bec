// `clm setup`: starter config.lua, secrets.lua (0600), the seed plugins and agents/; never overwrites.

import type { Out } from './render.js';

export async function runSetupCommand(stdout: Out, stderr: Out): Promise<number> {
  const { runSetup } = await import('../config/index.js');
  const { seedPluginDir } = await import('../lua/paths.js');
  let seed: string;
  try {
    seed = seedPluginDir();
  } catch (e) {
    stderr.write(`setup: ${(e as Error).message}\n`);
    return 1;
  }
  const r = runSetup({ seedPluginsDir: seed });
  for (const l of r.lines) (r.ok ? stdout : stderr).write(l + '\n');
  return r.ok ? 0 : 1;
}
