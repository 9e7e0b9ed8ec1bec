// Which directory a run's checkpoints cover: the git root above the directory clm was started in
// (a repository is one project), else that directory. The OS sandbox's writable roots follow the
// same rule; this is the one place that says it for checkpoints.

import { lstatSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The workspace of a run started in `cwd`: the nearest directory at or above it holding `.git`, else `cwd`; resolved through links. */
export function workspaceRoot(cwd: string): string {
  const start = realpathSync(cwd);
  for (let dir = start; ; dir = dirname(dir)) {
    try {
      lstatSync(join(dir, '.git'));
      return dir;
    } catch {
      /* not here */
    }
    if (dirname(dir) === dir) return start;
  }
}
