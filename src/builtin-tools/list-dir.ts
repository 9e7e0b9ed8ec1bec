// list_dir: a directory's entries, one per line, sorted bytewise (strcmp order), directories
// suffixed with '/'. Entries that do not fit the output cap are counted in a visible marker.

import { readdir } from 'node:fs/promises';
import type { ToolDef, ToolInvocation } from '../core/types.js';
import { argString, expandHome, parseArgs } from './args.js';
import { errnoText } from '../host/errno-text.js';

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
  invoke: invokeListDir,
};

async function invokeListDir(inv: ToolInvocation): Promise<void> {
  const args = parseArgs(inv.args);
  if (!args) return inv.fail('invalid arguments');
  const path = expandHome(argString(args, 'path') ?? '.');
  let names: Buffer[];
  try {
    const entries = await readdir(path, { withFileTypes: true });
    // Dirent.isDirectory() is false for a symlink to a directory, as d_type is in C.
    names = entries.map((d) => Buffer.from(d.isDirectory() ? d.name + '/' : d.name, 'utf8'));
  } catch (e) {
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
