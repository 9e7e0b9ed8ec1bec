// Which screen mode the UI starts in: inline with --no-alt-screen, else what config.lua's `ui` key
// (or the agent profile's) says, full screen by default. The first frame should not wait for
// config.lua to be evaluated: when no configuration file so much as mentions `ui`, the mode is
// the default and the screen starts at once; otherwise it starts once the configuration is loaded.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UiMode } from '../../config/types.js';
import { configDir } from '../../config/paths.js';

const MENTIONS_UI = /\bui\b/;

/** Lua source without its comments (strings kept), so a commented-out `-- ui = "inline"` does not count. */
export function withoutLuaComments(src: string): string {
  let out = '';
  let i = 0;
  const longEnd = (at: number): { close: string; from: number } | null => {
    const m = /^\[(=*)\[/.exec(src.slice(at, at + 64));
    return m ? { close: `]${m[1]}]`, from: at + m[0].length } : null;
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === '-' && src[i + 1] === '-') {
      const long = longEnd(i + 2);
      if (long) {
        const e = src.indexOf(long.close, long.from);
        i = e < 0 ? src.length : e + long.close.length;
        continue;
      }
      const nl = src.indexOf('\n', i);
      i = nl < 0 ? src.length : nl;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < src.length && src[j] !== c && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
      out += src.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '[') {
      const long = longEnd(i);
      if (long) {
        const e = src.indexOf(long.close, long.from);
        const end = e < 0 ? src.length : e + long.close.length;
        out += src.slice(i, end);
        i = end;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}

function mentionsUi(file: string): boolean {
  try {
    return MENTIONS_UI.test(withoutLuaComments(readFileSync(file, 'utf8')));
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
