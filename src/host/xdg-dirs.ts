// The XDG base directories clm keeps its files under: configuration in $XDG_CONFIG_HOME/clm,
// else $HOME/.config/clm; state (sessions, caches) in $XDG_STATE_HOME/clm, else
// $HOME/.local/state/clm. An unset or empty variable does not count. A variable that does not
// name a usable directory — a relative path, a file, /dev/null, a path through a file, one that
// cannot be searched — gives no directory and a problem to report: clm then runs without
// configuration, or without saving sessions, instead of failing. A base that does not exist is
// no problem (no configuration yet; the state directory is created), except a missing HOME for
// state: clm does not create a home directory.

import { statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

export interface ClmDir {
  /** The clm directory (it need not exist yet), or null when there is none. */
  dir: string | null;
  /** Why a variable that is set gives no directory (to report), else null. */
  problem: string | null;
}

const KINDS = {
  config: { variable: 'XDG_CONFIG_HOME', underHome: ['.config'] },
  state: { variable: 'XDG_STATE_HOME', underHome: ['.local', 'state'] },
} as const;

/** Why `path` (the value of `name`) cannot be a base directory, or null when it can. */
function baseProblem(name: string, path: string, missingIsProblem: boolean): string | null {
  if (!isAbsolute(path)) return `${name} (${path}) is not an absolute path`;
  try {
    return statSync(path).isDirectory() ? null : `${name} (${path}) is not a directory`;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return missingIsProblem ? `${name} (${path}) does not exist` : null;
    if (code === 'ENOTDIR') return `${name} (${path}) is not a directory (a part of the path is a file)`;
    if (code === 'EACCES') return `${name} (${path}) cannot be searched (permission denied)`;
    return `${name} (${path}) cannot be used (${code ?? (e as Error).message})`;
  }
}

/** clm's configuration or state directory in `env`. */
export function clmDir(kind: keyof typeof KINDS, env: NodeJS.ProcessEnv): ClmDir {
  const { variable, underHome } = KINDS[kind];
  const xdg = env[variable];
  if (xdg) {
    const problem = baseProblem(variable, xdg, false);
    return { dir: problem ? null : join(xdg, 'clm'), problem };
  }
  const home = env.HOME;
  if (!home) return { dir: null, problem: null };
  const problem = baseProblem('HOME', home, kind === 'state');
  return { dir: problem ? null : join(home, ...underHome, 'clm'), problem };
}
