// Keeping tools in step with a server: refreshes of its tool list coalesced (a server may announce
// list_changed thousands of times in a burst), and the glue for onToolsChanged that keeps a tool
// registry (the agent's addTool/removeTool) in step with each server's current tool set —
// withdraw the previous set, register the new one.

import type { ToolDef } from '../core/types.js';

export interface ToolTarget {
  addTool(def: ToolDef): void;
  removeTool(name: string): void;
}

/** An onToolsChanged callback applying each server's tool set to `target`. Registration errors (e.g. a name clash) go to onError. */
export function toolSync(target: ToolTarget, onError?: (text: string) => void): (server: string, tools: ToolDef[]) => void {
  const registered = new Map<string, string[]>();
  return (server, tools) => {
    for (const name of registered.get(server) ?? []) {
      try {
        target.removeTool(name);
      } catch {
        /* already gone */
      }
    }
    const added: string[] = [];
    for (const def of tools) {
      try {
        target.addTool(def);
        added.push(def.name);
      } catch (e) {
        onError?.(`mcp: ${server}: tool ${def.name} not registered: ${(e as Error).message}`);
      }
    }
    registered.set(server, added);
  };
}

/**
 * `run` as a trigger that never overlaps itself: triggers while it runs fold into one more run
 * after it (one in flight, one pending), which sees every change announced meanwhile.
 */
export function coalesced(run: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const go = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void run()
      .catch(() => {})
      .finally(() => {
        running = false;
        if (!again) return;
        again = false;
        go();
      });
  };
  return go;
}
