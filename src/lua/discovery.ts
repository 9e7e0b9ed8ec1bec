// Finding plugin files: every regular `*.lua` file of each directory (symlinks followed), in
// name order, directories in the order given. A missing directory is fine; a file over the size
// limit or unreadable is reported and skipped.

import { join } from 'node:path';
import { readRegularFile } from '../host/regular-file.js';
import { MAX_PLUGIN_BYTES } from './limits.js';
import type { LoadError, PluginSource } from './protocol.js';
import { lazyBuiltin } from '../host/lazy-builtin.js';

const fsp = lazyBuiltin<typeof import('node:fs/promises')>('node:fs/promises');

export interface Discovered {
  plugins: PluginSource[];
  errors: LoadError[];
}

type Found = { source: Omit<PluginSource, 'index'> } | { error: LoadError } | null;

export async function discoverPlugins(dirs: string[]): Promise<Discovered> {
  const perDir = await Promise.all(dirs.map((d) => scanDir(d)));
  const plugins: PluginSource[] = [];
  const errors: LoadError[] = [];
  for (const found of perDir.flat()) {
    if (!found) continue;
    if ('error' in found) errors.push(found.error);
    else plugins.push({ ...found.source, index: plugins.length });
  }
  return { plugins, errors };
}

async function scanDir(dir: string): Promise<Found[]> {
  let names: string[];
  try {
    names = await fsp().readdir(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    return [{ error: { plugin: dir, file: dir, message: `cannot read plugin directory: ${(e as Error).message}` } }];
  }
  // Byte order of the names (strcmp order), the same on every machine and locale.
  const files = names.filter((n) => n.length >= 5 && n.endsWith('.lua')).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return Promise.all(files.map((n) => readPlugin(join(dir, n), n.slice(0, -4))));
}

async function readPlugin(file: string, name: string): Promise<Found> {
  try {
    // Opened without blocking and checked on the descriptor: a FIFO named x.lua is skipped, not waited on.
    const source = new Uint8Array(await readRegularFile(file, MAX_PLUGIN_BYTES));
    return { source: { name, file, source } };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null; // vanished, or a dangling symlink
    if (code === 'ENOTREG' || code === 'EISDIR') return null;
    if (code === 'EFBIG')
      return {
        error: {
          plugin: name,
          file,
          message: `plugin file is too large (${(e as { size?: unknown }).size} bytes; the limit is ${MAX_PLUGIN_BYTES})`,
        },
      };
    return { error: { plugin: name, file, message: `cannot read plugin file: ${(e as Error).message}` } };
  }
}
