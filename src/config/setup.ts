// `clm setup`: create the config directory with the seed plugins, an agents/ directory, and
// starter secrets.lua (0600) and config.lua (0644). Never overwrites anything: every file is
// created exclusively, and an existing one is reported as kept.
//
// Result: `lines` is what to print, in order; when ok is false the last line is the error
// (print it to stderr and exit 1), and `error` holds it too.

import { makeDirs } from '../session/paths.js';
import { closeSync, constants, openSync, readFileSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clmDir } from '../host/xdg-dirs.js';
import { configDir, configPaths } from './paths.js';
import { CONFIG_TEMPLATE, SECRETS_TEMPLATE } from './templates.js';

export interface SetupOptions {
  /** The clm config directory; default $XDG_CONFIG_HOME/clm or $HOME/.config/clm. */
  dir?: string;
  /** Directory holding the seed plugins (*.lua) to install. */
  seedPluginsDir: string;
  /** Where XDG_CONFIG_HOME/HOME are read from when `dir` is not given (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface SetupResult {
  lines: string[];
  ok: boolean;
  error?: string;
}

const errText = (e: unknown) => {
  const err = e as NodeJS.ErrnoException;
  return err.code ? `${err.code}: ${err.message.replace(/^[A-Z]+: /, '')}` : String(err.message ?? e);
};

class SetupFailure extends Error {}

function mkdir(p: string, mode: number): void {
  try {
    makeDirs(p, mode);
  } catch (e) {
    throw new SetupFailure(`setup: mkdir ${p}: ${errText(e)}`);
  }
}

/** Create `p` with `data` unless it exists (O_EXCL). Returns true when written. */
function writeExclusive(p: string, data: string | Uint8Array, mode: number, verb = 'writing'): boolean {
  let fd: number;
  try {
    fd = openSync(p, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new SetupFailure(`setup: ${verb} ${p}: ${errText(e)}`);
  }
  try {
    writeFileSync(fd, data);
    closeSync(fd);
  } catch (e) {
    // A half-written file would be "kept existing" by the next run: remove it.
    try {
      closeSync(fd);
    } catch {
      /* already closed */
    }
    try {
      unlinkSync(p);
    } catch {
      /* nothing to remove */
    }
    throw new SetupFailure(`setup: ${verb} ${p}: ${errText(e)}`);
  }
  return true;
}

export function runSetup(opts: SetupOptions): SetupResult {
  const lines: string[] = [];
  const dir = opts.dir ?? configDir(opts.env ?? process.env);
  if (!dir) {
    const problem = opts.dir ? null : clmDir('config', opts.env ?? process.env).problem;
    const error = problem ? `setup: ${problem}` : 'setup: could not determine config path ($XDG_CONFIG_HOME or $HOME not set)';
    return { lines: [error], ok: false, error };
  }
  const paths = configPaths(dir);
  try {
    mkdir(paths.plugins, 0o755);
    let seeds: string[];
    try {
      seeds = readdirSync(opts.seedPluginsDir)
        .filter((f) => f.endsWith('.lua'))
        .sort();
    } catch (e) {
      throw new SetupFailure(`setup: seeding ${paths.plugins}: ${errText(e)}`);
    }
    for (const f of seeds) {
      const to = join(paths.plugins, f);
      let data: Buffer;
      try {
        data = readFileSync(join(opts.seedPluginsDir, f));
      } catch (e) {
        throw new SetupFailure(`setup: seeding ${to}: ${errText(e)}`);
      }
      // 0644 whatever the package's file mode (a read-only install must not give read-only copies).
      writeExclusive(to, data, 0o644, 'seeding');
    }
    lines.push(`plugins in ${paths.plugins}`);

    mkdir(paths.agents, 0o755);
    lines.push(`agent profiles in ${paths.agents}`);

    lines.push(`${writeExclusive(paths.secrets, SECRETS_TEMPLATE, 0o600) ? 'wrote' : 'kept existing'} ${paths.secrets}`);
    lines.push(`${writeExclusive(paths.config, CONFIG_TEMPLATE, 0o644) ? 'wrote' : 'kept existing'} ${paths.config}`);
    return { lines, ok: true };
  } catch (e) {
    if (!(e instanceof SetupFailure)) throw e;
    lines.push(e.message);
    return { lines, ok: false, error: e.message };
  }
}
