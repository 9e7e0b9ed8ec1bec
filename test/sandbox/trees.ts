// Directory trees for the sandbox tests: a workspace (a git repository), a home with key files, a
// clm config directory, and a place outside both. They are made under /var/tmp, not /tmp: a
// sandboxed command's /tmp is the session's own, so a tree under the host's /tmp would be out of
// its sight, and a refused write there would fail for the wrong reason (not found, not read-only).

import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];
process.on('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A fresh directory outside /tmp (mode 0755, so another user running the corpus can reach into it). */
export function treeDir(prefix: string): string {
  const base = existsSync('/var/tmp') ? '/var/tmp' : tmpdir();
  const d = mkdtempSync(join(base, prefix));
  chmodSync(d, 0o755);
  made.push(d);
  return d;
}

export interface Trees {
  root: string;
  /** The workspace: a git repository (no hooks directory: a tool must not be able to make one). */
  ws: string;
  home: string;
  /** $XDG_CONFIG_HOME/clm */
  config: string;
  /** A directory outside the workspace with a file in it. */
  outside: string;
  /** The environment a run in these trees gets. */
  env: NodeJS.ProcessEnv;
}

export function makeTrees(prefix = 'clm-sbx-'): Trees {
  return fillTrees(treeDir(prefix));
}

/** Make the trees in `root` afresh (what was there goes): the same paths, the original content. */
export function fillTrees(root: string): Trees {
  for (const n of readdirSync(root)) rmSync(join(root, n), { recursive: true, force: true });
  const ws = join(root, 'ws');
  const home = join(root, 'home');
  const config = join(home, '.config', 'clm');
  const outside = join(root, 'outside');
  mkdirSync(join(ws, '.git'), { recursive: true });
  writeFileSync(join(ws, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n');
  writeFileSync(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(ws, 'README'), 'workspace file\n');
  mkdirSync(join(config, 'plugins'), { recursive: true });
  writeFileSync(join(config, 'config.lua'), 'return {}\n');
  writeFileSync(join(config, 'secrets.lua'), 'return { key = "SECRET-LUA-VALUE-1234" }\n', { mode: 0o600 });
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE-KEY-MATERIAL-5678\n', { mode: 0o600 });
  mkdirSync(outside);
  writeFileSync(join(outside, 'target'), 'original\n');
  return {
    root,
    ws,
    home,
    config,
    outside,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_STATE_HOME: join(home, '.local', 'state'),
      SHELL: '/bin/sh',
      LANG: 'C',
    },
  };
}
