// Public API of the portable core: `import { createAgent } from 'clm'`. No Node imports here.
// Its agents speak every dialect: createAgent's, and `new Agent(…)`'s without `dialects`.

import { DIALECTS } from './core/providers/index.js';
import { setDefaultDialects } from './core/providers/dialects.js';

export * from './portable-api.js';
export { createAgent } from './core/agent.js';
export { listModels } from './core/probes.js';
export { buildUrl, adapterFor, DIALECTS } from './core/providers/index.js';

setDefaultDialects(DIALECTS);
