// Which screen mode the UI starts in: inline with --no-alt-screen, else what config.lua's `ui` key
// (or the agent profile's) says, full screen by default. The first frame should not wait for
// config.lua to be evaluated: when no configuration file so much as mentions `ui`, the mode is
// the default and the screen starts at once; otherwise it starts once the configuration is loaded.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UiMode } from '../../config/types.js';
import { configDir } from '../../config/paths.js';

const MENTIONS_UI = /\bui\b/;

function mentionsUi(file: string): boolean {
  try {
    return MENTIONS_UI.test(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}

/** The mode known before config.lua is loaded, or null when only loading it tells. */
export function modeBeforeConfig(noAltScreen: boolean, env: NodeJS.ProcessEnv = process.env): UiMode | null {
  if (noAltScreen) return 'inline';
  const dir = configDir(env);
  if (!dir) return 'fullscreen';
  if (mentionsUi(join(dir, 'config.lua'))) return null;
  let names: string[] = [];
  try {
    names = readdirSync(join(dir, 'agents'));
  } catch {
    /* no profiles directory */
  }
  for (const n of names) if (n.endsWith('.lua') && mentionsUi(join(dir, 'agents', n))) return null;
  return 'fullscreen';
}

/** The mode once the configuration is known (the flag wins). */
export function modeOf(noAltScreen: boolean, configured: UiMode | undefined): UiMode {
  return noAltScreen ? 'inline' : (configured ?? 'fullscreen');
}
