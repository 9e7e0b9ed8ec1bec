// Where clm keeps its configuration: $XDG_CONFIG_HOME/clm, else $HOME/.config/clm (src/xdg.c).

import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The clm config directory, or null when neither variable is set (empty counts as unset). */
export function configDir(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'clm');
  if (env.HOME) return join(env.HOME, '.config', 'clm');
  return null;
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

/** Whether a config.lua exists where loadConfig would look (a cheap check, nothing is read). */
export function hasConfigFile(env: NodeJS.ProcessEnv = process.env): boolean {
  const dir = configDir(env);
  return dir !== null && existsSync(join(dir, 'config.lua'));
}
