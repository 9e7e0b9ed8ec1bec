// Opening a URL in the person's browser for an OAuth login: the BROWSER variable's command when it
// is set (`%s` stands for the URL, else the URL is its last argument), else `open` on macOS and
// `xdg-open` where there is a display. Where there is none, nothing is started and the caller
// prints the URL for the person to open.

import { spawn } from 'node:child_process';

/** The command line that would open `url`, or null where there is no browser to start. */
export function browserCommand(url: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string[] | null {
  const browser = env.BROWSER?.split(':')[0]?.trim();
  if (browser) {
    const words = browser.split(/\s+/);
    return words.some((w) => w.includes('%s')) ? words.map((w) => w.replaceAll('%s', url)) : [...words, url];
  }
  if (platform === 'darwin') return ['open', url];
  if (platform === 'win32') return null;
  return env.DISPLAY || env.WAYLAND_DISPLAY ? ['xdg-open', url] : null;
}

/**
 * Start the browser on `url`, detached, without clm's API key in its environment. Resolves true
 * once it has started, false where there is no browser, it could not be started, or `url` is no
 * http(s) address (the caller then shows it instead).
 */
export function openBrowser(url: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  // The address comes from the server's metadata: only a web page is handed to a program.
  if (!/^https?:\/\//i.test(url)) return Promise.resolve(false);
  const argv = browserCommand(url, env);
  if (!argv) return Promise.resolve(false);
  const { CLM_API_KEY: _, ...childEnv } = env;
  return new Promise((resolve) => {
    try {
      const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: 'ignore', env: childEnv });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
