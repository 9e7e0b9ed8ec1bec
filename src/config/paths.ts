// Where clm keeps its configuration: $XDG_CONFIG_HOME/clm, else $HOME/.config/clm (src/xdg.c);
// host/xdg-dirs.ts checks the variables.

import { join } from 'node:path';
import { clmDir } from '../host/xdg-dirs.js';

/**
 * The clm config directory, or null when there is none: neither variable set (empty counts as
 * unset), or the one that counts is no usable directory (configDirWarning says why).
 */
export function configDir(env: NodeJS.ProcessEnv = process.env): string | null {
  return clmDir('config', env).dir;
}

/** Why the configuration is not read although a variable is set (a file, /dev/null, …), or null. */
export function configDirWarning(env: NodeJS.ProcessEnv = process.env): string | null {
  const { problem } = clmDir('config', env);
  return problem && `config: ${problem}; running without configuration`;
}

export interface ConfigPaths {
  dir: string;
  config: string;
  secrets: string;
  plugins: string;
  agents: string;
}

export function configPaths(dir: string): ConfigPaths {
  return {
    dir,
    config: join(dir, 'config.lua'),
    secrets: join(dir, 'secrets.lua'),
    plugins: join(dir, 'plugins'),
    agents: join(dir, 'agents'),
  };
}
