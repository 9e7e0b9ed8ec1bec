// What the terminal can show, guessed from the environment (terminals have no reliable query for
// these): UTF-8 box drawing, and OSC 8 hyperlinks.

type Env = Record<string, string | undefined>;

/** Whether the locale is UTF-8 (box drawing and bullets in Unicode); an unset locale counts as UTF-8. */
export function isUnicodeLocale(env: Env = process.env): boolean {
  const loc = env.LC_ALL || env.LC_CTYPE || env.LANG;
  if (!loc) return true;
  return /utf-?8/i.test(loc);
}

/** Whether the terminal is known to turn OSC 8 sequences into clickable links. */
export function supportsHyperlinks(env: Env = process.env): boolean {
  if (env.FORCE_HYPERLINK !== undefined) return env.FORCE_HYPERLINK !== '0';
  if (env.TERM === 'dumb') return false;
  const prog = env.TERM_PROGRAM ?? '';
  if (['iTerm.app', 'WezTerm', 'vscode', 'ghostty', 'Hyper', 'Tabby', 'rio'].includes(prog)) return true;
  if (env.WT_SESSION || env.KITTY_WINDOW_ID || env.KONSOLE_VERSION || env.ALACRITTY_WINDOW_ID || env.WEZTERM_EXECUTABLE) return true;
  if (/^(xterm-kitty|foot|foot-extra|alacritty|xterm-ghostty|wezterm)$/.test(env.TERM ?? '')) return true;
  const vte = Number(env.VTE_VERSION);
  if (Number.isFinite(vte) && vte >= 5000) return true;
  return false;
}
