// The models of local servers as `clm models` and `/model` list them: each server, then its
// models, the loaded ones marked.

import { hostPort } from './local-servers.js';
import type { LocalServer } from './local-server.js';

export function modelsText(servers: readonly LocalServer[]): string {
  return servers
    .map((s) => [`${s.kind} at ${hostPort(s.origin)}`, ...s.models.map((m) => `  ${m.id}${m.loaded ? '  (loaded)' : ''}`)].join('\n'))
    .join('\n');
}
