// list_dir: a directory's entries, one per line, sorted bytewise (strcmp order), directories
// suffixed with '/'. Entries that do not fit the output cap are counted in a visible marker.

import { type FileGuard, SandboxRefusal } from '../sandbox/file-guard.js';
import type { ToolDef, ToolInvocation } from '../core/types.js';
import { argString, expandHome, parseToolArgs } from './args.js';
import { errnoText } from '../host/errno-text.js';
import { lazyBuiltin } from '../host/lazy-builtin.js';

// Loaded when a directory is listed, not at start (the promise API brings a dozen modules).
const fsp = lazyBuiltin<typeof import('node:fs/promises')>('node:fs/promises');

/** Cap bytes kept free for the truncation marker. */
const MARKER_RESERVE = 96;

export const listDirTool: ToolDef = {
  name: 'list_dir',
  description: "list a directory's entries, one per line, directories suffixed with '/'",
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: "directory to list (default '.')" },
    },
    required: [],
  },
  noPrompt: true, // read-only: safe to run unprompted
  readOnly: true,
  invoke: (inv) => invokeListDir(inv, null),
};

/** list_dir under the sandbox's file policy. */
export function guardedListDir(guard: FileGuard): ToolDef {
  return { ...listDirTool, invoke: (inv) => invokeListDir(inv, guard) };
}

async function invokeListDir(inv: ToolInvocation, guard: FileGuard | null): Promise<void> {
  const args = parseToolArgs(inv.args);
  if (!args) return inv.fail('invalid arguments');
  const path = expandHome(argString(args, 'path') ?? '.');
  let names: Buffer[];
  try {
    guard?.beforeRead(path);
    const entries = await fsp().readdir(path, { withFileTypes: true });
    // Dirent.isDirectory() is false for a symlink to a directory, as d_type is in C.
    names = entries.map((d) => Buffer.from(d.isDirectory() ? d.name + '/' : d.name, 'utf8'));
  } catch (e) {
    if (e instanceof SandboxRefusal) return inv.fail(e.message);
    return inv.fail(`cannot open '${path}': ${errnoText(e)}`);
  }
  if (names.length === 0) return inv.complete('(empty)');
  names.sort(Buffer.compare);

  const budget = Math.max(0, inv.outputCap - MARKER_RESERVE);
  const out: Buffer[] = [];
  let used = 0;
  let shown = 0;
  const nl = Buffer.from('\n');
  for (const n of names) {
    if (used + n.length + 1 > budget) break;
    out.push(n, nl);
    used += n.length + 1;
    shown++;
  }
  if (shown < names.length) {
    out.push(Buffer.from(`[output truncated: ${names.length - shown} of ${names.length} entries not shown]`));
  }
  inv.complete(Buffer.concat(out).toString('utf8'));
}
