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
  for (let i = 0; i < src.length; ) {
    if (src.startsWith('--', i)) {
      i = commentEnd(src, i + 2);
      continue;
    }
    const end = stringEnd(src, i);
    out += src.slice(i, end);
    i = end;
  }
  return out;
}

/** Where a long bracket opening at `at` (`[[`, `[==[`) ends, past its close (the end of `src` when unclosed), or -1 when none opens there. */
function longBracketEnd(src: string, at: number): number {
  const m = /^\[(=*)\[/.exec(src.slice(at, at + 64));
  if (!m) return -1;
  const close = `]${m[1]}]`;
  const e = src.indexOf(close, at + m[0].length);
  return e < 0 ? src.length : e + close.length;
}

/** Where a comment whose text starts at `at` (after its `--`) ends: a long bracket's close, else the line's end. */
function commentEnd(src: string, at: number): number {
  const long = longBracketEnd(src, at);
  if (long >= 0) return long;
  const nl = src.indexOf('\n', at);
  return nl < 0 ? src.length : nl;
}

/** Where a string starting at `i` ends (a quoted one at its quote or the line's end, a long one at its close); else `i + 1`. */
function stringEnd(src: string, i: number): number {
  const c = src[i];
  if (c === '"' || c === "'") {
    let j = i + 1;
    while (j < src.length && src[j] !== c && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
    return j + 1;
  }
  const long = c === '[' ? longBracketEnd(src, i) : -1;
  return long >= 0 ? long : i + 1;
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
