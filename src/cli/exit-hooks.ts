// What must happen however the process ends — a signal, a second Ctrl-C, process.exit from
// anywhere: kill what would outlive it (tool process groups, MCP server children). One 'exit'
// listener for the process, whatever number of runtimes and rebuilds come and go.

import { killAllGroupsNow } from '../builtin-tools/process-group.js';

const hooks = new Set<() => void>();
let installed = false;

/** Run `fn` (synchronously) when the process exits; the returned function removes it again. */
export function onProcessExit(fn: () => void): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', () => {
      for (const h of [...hooks]) {
        try {
          h();
        } catch {
          /* the others still run */
        }
      }
    });
  }
  hooks.add(fn);
  return () => {
    hooks.delete(fn);
  };
}

/** No tool process group outlives the process (signals.ts exits through process.exit). */
export function killToolGroupsOnExit(): void {
  onProcessExit(killAllGroupsNow);
}
