// `clm models`: the models of every local server found (local-servers.ts), the loaded ones
// marked; with none, where clm looked and how to point it.

import type { Writable } from 'node:stream';
import { forTerminal } from '../core/terminal-text.js';
import { createDebugLog } from '../host/debug-log.js';
import { createNodeHost } from '../host/node.js';
import { findLocalServers, noneText, placesFrom } from './local-servers.js';
import { modelsText } from './models-text.js';

export async function runModelsCommand(stdout: Writable, stderr: Writable, env: NodeJS.ProcessEnv): Promise<number> {
  let places: ReturnType<typeof placesFrom>;
  try {
    places = placesFrom(env.CLM_LOCAL_SERVERS);
  } catch (e) {
    stderr.write(`clm: ${forTerminal((e as Error).message)}\n`);
    return 2;
  }
  const host = createNodeHost({ log: createDebugLog(env.CLM_DEBUG_LOG) ?? null });
  try {
    const servers = await findLocalServers(host, places).all;
    if (!servers.length) {
      stderr.write(`clm: ${noneText(places)}\n`);
      return 1;
    }
    // Model ids come from the servers: shown, never obeyed, on a terminal.
    stdout.write(`${forTerminal(modelsText(servers))}\n`);
    return 0;
  } finally {
    host.close();
  }
}
