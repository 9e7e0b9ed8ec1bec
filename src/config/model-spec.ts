// `provider/model-id` (src/model_spec.h): split at the FIRST '/', so the id may itself contain
// slashes (`openrouter/qwen/qwen3-32b`); no '/' means a literal id on the active connection.

import { ConfigError } from './errors.js';

export interface ModelSpec {
  /** The providers[] entry named by the spec; undefined for a bare id. */
  provider?: string;
  /** The wire model id. */
  model: string;
}

/** What is wrong with a spec ('' / '/x' / 'p/'), or null when it is fine. */
export function modelSpecProblem(spec: string): string | null {
  if (spec === '') return 'is empty';
  const slash = spec.indexOf('/');
  if (slash === 0) return "has an empty provider name before '/'";
  if (slash === spec.length - 1) return "has no model id after '/'";
  return null;
}

/** Throws ConfigError (`model 'p/' has no model id after '/'`) for a malformed spec. */
export function parseModelSpec(spec: string): ModelSpec {
  const problem = modelSpecProblem(spec);
  if (problem) throw new ConfigError(`model '${spec}' ${problem}`);
  const slash = spec.indexOf('/');
  if (slash < 0) return { model: spec };
  return { provider: spec.slice(0, slash), model: spec.slice(slash + 1) };
}
