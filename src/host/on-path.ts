// Finding a program as exec would, without running it: a name with a slash is a path, a bare
// name is looked for in each directory of PATH. Asking this costs a few stat calls; running the
// program to see (`git --version`) costs a fork of the whole process, which blocks the event loop
// for milliseconds on a large heap.

import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { childPath } from './child-path.js';

/** Whether `path` is a file this process may execute. */
function executableFile(path: string): boolean {
  try {
    if (!statSync(path, { throwIfNoEntry: false })?.isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` in the directories of `path` (a PATH value), or null. */
export function findOnPath(name: string, path: string): string | null {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    if (executableFile(childPath(dir, name))) return join(dir, name);
  }
  return null;
}

/** Whether `command` names a program that can run: a path as given, a bare name on env's PATH. */
export function runnable(command: string, env: NodeJS.ProcessEnv): boolean {
  if (command.includes('/')) return executableFile(command);
  return findOnPath(command, env.PATH ?? '') !== null;
}
