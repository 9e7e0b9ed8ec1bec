// Where the worker script and the packaged seed plugins are, from wherever this code runs:
// the TypeScript sources (tests, via tsx), tsc's dist/lua/*.js, or the bundled dist/cli.js.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface WorkerLocation {
  /** A script URL, or (eval) the source of a bootstrap script. */
  script: URL | string;
  eval?: boolean;
}

export function workerLocation(): WorkerLocation {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    // Running from sources (tests): Node 20 resolves a worker's entry before any --import
    // preload runs, so register tsx from a tiny bootstrap, then import the TypeScript worker.
    const api = import.meta.resolve('tsx/esm/api');
    const target = new URL('./worker.ts', here).href;
    return {
      script: `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(target)}); })`,
      eval: true,
    };
  }
  const sibling = new URL('./worker.js', here); // tsc output: dist/lua/worker-supervisor.js next to dist/lua/worker.js
  if (/\/lua\/[^/]+\.js$/.test(here) && existsSync(fileURLToPath(sibling))) return { script: sibling };
  return { script: new URL('./lua-worker.js', here) }; // esbuild bundle: dist/cli.js next to dist/lua-worker.js
}

/** The package root (the directory whose package.json is named "clm"), or null. */
export function packageRoot(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: unknown }).name === 'clm') return dir;
      } catch {
        /* unreadable: keep walking */
      }
    }
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** The seed plugins shipped in the package (`plugins/` at its root). */
export function seedPluginDir(): string {
  const root = packageRoot();
  if (!root) throw new Error('cannot find the clm package directory (for its seed plugins)');
  return join(root, 'plugins');
}
