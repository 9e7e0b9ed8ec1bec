// Glue for onToolsChanged: keep a tool registry (the agent's addTool/removeTool) in step with
// each server's current tool set — withdraw the previous set, register the new one.

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
