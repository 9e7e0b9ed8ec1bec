// Where the browser tests find Chromium: $CLM_CHROMIUM, else the first of the usual names on PATH
// (Debian's package installs /usr/bin/chromium). Shared by scripts/test.mjs and the tests.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

// Without the background-networking flags Chromium keeps dialling Google's services, and on a
// closed network those connections pile up.
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** How to get Chromium, for the notice when it is missing. */
export const CHROMIUM_HINT = 'install Chromium (Debian/Ubuntu: sudo apt-get install chromium) or set CLM_CHROMIUM=/path/to/chrome';

/** The Chromium executable, or null when there is none. */
export function findChromium(env = process.env) {
  const isExe = (p) => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (env.CLM_CHROMIUM) return isExe(env.CLM_CHROMIUM) ? env.CLM_CHROMIUM : null;
  for (const name of NAMES) {
    for (const dir of (env.PATH ?? '').split(delimiter)) {
      if (dir && isExe(join(dir, name))) return join(dir, name);
    }
  }
  return null;
}
