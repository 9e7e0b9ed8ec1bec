// Plugin tools for a run, without making the first request wait for the Lua worker: the tools
// each plugin set registered last time are cached in the state dir (keyed by the files' contents,
// the reserved names and the plugin config; the package ships the entry for its seed plugins),
// so on a cache hit they are registered at
// once as proxies that wait for the worker only when called. When the worker is up, the real
// set replaces any difference and the cache is refreshed. The cache never holds a secret: load
// errors are stored masked, and a tool set whose schemas hold one is not cached at all.

import { lazyBuiltin } from '../host/lazy-builtin.js';
import type { SandboxPolicy } from '../sandbox/policy.js';
import { existsSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ToolDef } from '../core/types.js';
import type { Secrets } from '../host/redact.js';
import { readRegularFileSync } from '../host/regular-file.js';
import type { PluginHost } from '../lua/index.js';
import { makeDirs } from '../session/paths.js';
import { packageRoot, seedPluginDir } from '../lua/paths.js';
import { configDir } from '../config/paths.js';
import type { ToolTarget } from '../mcp/tool-sync.js';

const crypto = lazyBuiltin<typeof import('node:crypto')>('node:crypto');

interface CachedTool {
  name: string;
  description?: string;
  parameters?: object;
  timeoutMs?: number;
  noPrompt?: boolean;
  hidden?: boolean;
}

export interface CacheEntry {
  tools: CachedTool[];
  errors: string[];
}
export interface CacheFile {
  version: 2;
  entries: Record<string, CacheEntry>;
}

export interface PluginToolsOptions {
  dirs: string[];
  reservedNames: string[];
  toolsConfig?: Record<string, unknown>;
  /** Directory for the cache file (the state dir); none ⇒ no cache. */
  cacheDir?: string;
  target: ToolTarget;
  notice(text: string): void;
  log?: (line: string) => void;
  /** The sandbox policy clm.read_file / clm.write_file obey; absent: unconfined. */
  sandbox?: SandboxPolicy;
  /** The run's secrets: masked in the load errors the cache keeps. */
  secrets?: Secrets;
}

export interface PluginTools {
  /** Resolves when the worker has loaded (or failed). */
  ready: Promise<PluginHost | null>;
  /** Whether tools were registered from the cache (the first request need not wait). */
  fromCache: boolean;
  close(): Promise<void>;
}

/**
 * The plugin directories of a run: -p DIR, else the config's plugins/ (the packaged seed plugins
 * when there is none, without writing into the user's config), then agents/<agent>/ of the
 * profile; only those that hold a .lua file.
 */
export function pluginDirs(o: { explicit?: string; agentName?: string; env: NodeJS.ProcessEnv; notice(text: string): void }): string[] {
  const dirs: string[] = [];
  const cdir = configDir(o.env);
  if (o.explicit) {
    if (!existsSync(o.explicit)) o.notice(`plugins: ${o.explicit} does not exist; no plugins loaded`);
    dirs.push(o.explicit);
  } else {
    const def = cdir ? join(cdir, 'plugins') : null;
    if (def && existsSync(def)) dirs.push(def);
    else {
      try {
        dirs.push(seedPluginDir());
      } catch (e) {
        o.notice(`plugins: ${(e as Error).message}`);
      }
    }
  }
  if (o.agentName && cdir) dirs.push(join(cdir, 'agents', o.agentName));
  return dirs.filter((d) => {
    if (!existsSync(d)) return false;
    try {
      return readdirSync(d).some((n) => n.endsWith('.lua'));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'ENOTDIR' ? 'not a directory' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
      o.notice(`plugins: cannot read the plugin directory ${d}: ${why}; no plugins loaded from it`);
      return false;
    }
  });
}

/**
 * What decides which tools a plugin set registers: each file's directory slot, name and
 * content, the names plugins may not take, and the plugin config. Content rather than paths and
 * mtimes, so the cache shipped for the packaged seed plugins matches on any installation.
 */
export function fingerprint(o: Pick<PluginToolsOptions, 'dirs' | 'reservedNames' | 'toolsConfig'>): string | null {
  const h = crypto().createHash('sha256');
  h.update(JSON.stringify([o.reservedNames, o.toolsConfig ?? {}]));
  for (const [i, d] of o.dirs.entries()) {
    let names: string[];
    try {
      names = readdirSync(d)
        .filter((n) => n.endsWith('.lua'))
        .sort();
    } catch {
      continue;
    }
    for (const n of names) {
      let body: Buffer;
      try {
        // Only regular files (discovery skips the rest): reading a FIFO named x.lua would block.
        body = readRegularFileSync(join(d, n), MAX_PLUGIN_BYTES);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOTREG' || code === 'EISDIR' || code === 'ENOENT') continue;
        return null;
      }
      h.update(`\0${i}\0${n}\0${body.length}\0`).update(body);
    }
  }
  return h.digest('hex');
}

/** The cache built with the package for its seed plugins (scripts/seed-cache.mjs). */
function shippedEntry(key: string): CacheEntry | undefined {
  const root = packageRoot();
  if (!root) return undefined;
  try {
    const c = JSON.parse(readRegularFileSync(join(root, 'dist', SHIPPED_CACHE), MAX_CACHE_BYTES).toString('utf8')) as CacheFile;
    return c.version === 2 ? c.entries[key] : undefined;
  } catch {
    return undefined;
  }
}

export const SHIPPED_CACHE = 'seed-plugin-tools.json';
/** A cache file above this size is ignored (it holds tool schemas, a few KiB). */
const MAX_CACHE_BYTES = 16 * 1024 * 1024;
/** As the plugin runtime's limit: a larger file is not a plugin. */
const MAX_PLUGIN_BYTES = 1024 * 1024;

function readCache(path: string): CacheFile {
  try {
    // A FIFO or device in its place is refused at once (the cache is optional), never waited on.
    const c = JSON.parse(readRegularFileSync(path, MAX_CACHE_BYTES).toString('utf8')) as CacheFile;
    if (c && c.version === 2 && c.entries && typeof c.entries === 'object') return c;
  } catch {
    /* missing or damaged: start over */
  }
  return { version: 2, entries: {} };
}

function writeCache(path: string, dir: string, c: CacheFile): void {
  try {
    makeDirs(dir, 0o700);
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(c), { mode: 0o600 });
    renameSync(tmp, path);
  } catch {
    /* a cache is optional */
  }
}

export function describe(t: ToolDef): CachedTool {
  const c: CachedTool = { name: t.name };
  if (t.description !== undefined) c.description = t.description;
  if (t.parameters !== undefined) c.parameters = typeof t.parameters === 'string' ? JSON.parse(t.parameters) : t.parameters;
  if (t.timeoutMs !== undefined) c.timeoutMs = t.timeoutMs;
  if (t.noPrompt) c.noPrompt = true;
  if (t.hidden) c.hidden = true;
  return c;
}

export function startPluginTools(o: PluginToolsOptions): PluginTools {
  const key = fingerprint(o);
  const cachePath = o.cacheDir ? join(o.cacheDir, 'plugin-tools-cache.json') : null;
  const cache = cachePath ? readCache(cachePath) : null;
  const cached = key ? (cache?.entries[key] ?? shippedEntry(key)) : undefined;
  let host: PluginHost | null = null;
  let closed = false;

  const loading = (async () => {
    const { loadPlugins } = await import('../lua/index.js');
    return loadPlugins({ dirs: o.dirs, reservedNames: o.reservedNames, toolsConfig: o.toolsConfig, log: o.log, sandbox: o.sandbox });
  })();

  const registered = new Set<string>();
  const add = (d: ToolDef) => {
    try {
      o.target.addTool(d);
      registered.add(d.name);
    } catch (e) {
      o.notice(`plugin tool ${d.name} not registered: ${(e as Error).message}`);
    }
  };
  if (cached) {
    // Load errors are as deterministic as the tools: report them now, not after the reply.
    for (const e of cached.errors) o.notice(e);
    for (const c of cached.tools) {
      add({
        ...c,
        invoke: async (inv) => {
          const h = await ready;
          const real = h?.tools.find((t) => t.name === c.name);
          if (!real) inv.fail(`plugin tool '${c.name}' is no longer available`);
          else await real.invoke(inv);
        },
      });
    }
  }

  const ready: Promise<PluginHost | null> = loading.then(
    (h) => {
      host = h;
      if (closed) {
        void h.close();
        return h;
      }
      const mask = (t: string) => o.secrets?.mask(t) ?? t;
      const errors = h.errors.map((e) => mask(`plugin ${e.plugin}: ${e.message}`));
      const same =
        cached &&
        cached.tools.length === h.tools.length &&
        cached.tools.every((c, i) => JSON.stringify(c) === JSON.stringify(describe(h.tools[i]!))) &&
        JSON.stringify(cached.errors) === JSON.stringify(errors);
      if (!cached || JSON.stringify(cached.errors) !== JSON.stringify(errors)) for (const e of errors) o.notice(e);
      if (!same) {
        // First run, or the plugins changed in a way the fingerprint missed: install the real set.
        for (const n of registered) {
          try {
            o.target.removeTool(n);
          } catch {
            /* gone */
          }
        }
        registered.clear();
        for (const t of h.tools) add(t);
        if (key && cache && cachePath && o.cacheDir) {
          const tools = h.tools.map(describe);
          // Schemas must register as they are, so a set whose schemas hold a secret is not cached.
          const shown = JSON.stringify(tools);
          cache.entries = mask(shown) === shown ? { [key]: { tools, errors } } : {};
          writeCache(cachePath, o.cacheDir, cache);
        }
      }
      return h;
    },
    (e: unknown) => {
      o.notice(`plugins: ${(e as Error).message}`);
      return null;
    },
  );

  return {
    ready,
    fromCache: !!cached,
    close: async () => {
      closed = true;
      // A worker still starting is not waited for: closing happens when it is up, and process
      // exit ends it anyway.
      if (host) await host.close();
    },
  };
}
