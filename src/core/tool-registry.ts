// The tool registry: unique names, registration order = schema order, remembered permission
// decisions, and the advertised schema (parsed and serialised once per tool, so request
// prefixes stay byte-stable).

import { ClmError } from './errors.js';
import type { ToolSchema } from './providers/adapter.js';
import type { ToolDef } from './types.js';

export const DEFAULT_OUTPUT_CAP = 65536;
export const MAX_OUTPUT_CAP = 1048576;
export const MAX_TIMEOUT_MS = 600000;

export interface RegisteredTool {
  readonly def: ToolDef;
  /** Remembered allow/deny (allow_always / deny_always), per registration. */
  remembered?: 'allow' | 'deny';
  schema: ToolSchema | null;
}

function normaliseParameters(def: ToolDef): Record<string, unknown> {
  let p: unknown = def.parameters;
  if (typeof p === 'string') {
    try {
      p = JSON.parse(p);
    } catch {
      throw new ClmError('EINVAL', `tool '${def.name}': parameters are not valid JSON`);
    }
  }
  if (p === undefined || p === null) p = {};
  if (typeof p !== 'object' || Array.isArray(p))
    throw new ClmError('EINVAL', `tool '${def.name}': parameters must be a JSON Schema object`);
  // A schema without a top-level "type" keeps its properties (it is an object schema all the same).
  const out: Record<string, unknown> = { type: 'object', ...(p as Record<string, unknown>) };
  const props: Record<string, unknown> = { ...((out.properties as Record<string, unknown>) ?? {}) };
  if (def.timeoutOverridable && !('timeout_ms' in props)) {
    props.timeout_ms = { type: 'integer', description: 'optional: max milliseconds before this call is aborted' };
  }
  if (def.outputCapOverridable && !('output_cap' in props)) {
    props.output_cap = { type: 'integer', description: 'optional: max bytes of output to return' };
  }
  out.properties = props;
  return out;
}

export class ToolRegistry {
  readonly #tools = new Map<string, RegisteredTool>();
  #schemaCache: ToolSchema[] | null = null;

  add(def: ToolDef): void {
    if (!def || typeof def.name !== 'string' || !def.name) throw new ClmError('EINVAL', 'tool needs a name');
    if (typeof def.invoke !== 'function') throw new ClmError('EINVAL', `tool '${def.name}' needs an invoke function`);
    if (this.#tools.has(def.name)) throw new ClmError('EEXIST', `tool '${def.name}' is already registered`);
    const parameters = normaliseParameters(def);
    const schema: ToolSchema | null = def.hidden
      ? null
      : {
          name: def.name,
          description: def.description ?? '',
          parameters,
          parametersJson: JSON.stringify(parameters),
        };
    this.#tools.set(def.name, { def, schema });
    this.#schemaCache = null;
  }

  remove(name: string): void {
    if (!this.#tools.delete(name)) throw new ClmError('ENOENT', `no tool named '${name}'`);
    this.#schemaCache = null;
  }

  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }

  /** Advertised tools in registration order (hidden ones left out). Same array while unchanged. */
  schema(): ToolSchema[] {
    if (!this.#schemaCache) {
      this.#schemaCache = [];
      for (const t of this.#tools.values()) if (t.schema) this.#schemaCache.push(t.schema);
    }
    return this.#schemaCache;
  }
}

/** Per-call limits: the tool's own, optionally overridden by the model's arguments, within ceilings. */
export function callLimits(def: ToolDef, args: unknown): { outputCap: number; timeoutMs: number } {
  let outputCap = def.outputCap && def.outputCap > 0 ? def.outputCap : DEFAULT_OUTPUT_CAP;
  let timeoutMs = def.timeoutMs && def.timeoutMs > 0 ? def.timeoutMs : 0;
  const a = (args && typeof args === 'object' ? args : {}) as Record<string, unknown>;
  // A positive value asked for stays positive: a fraction must not become 0 (no output, no deadline).
  if (def.outputCapOverridable && typeof a.output_cap === 'number' && a.output_cap > 0) outputCap = Math.max(1, Math.floor(a.output_cap));
  if (def.timeoutOverridable && typeof a.timeout_ms === 'number' && a.timeout_ms > 0) timeoutMs = Math.max(1, Math.floor(a.timeout_ms));
  return { outputCap: Math.min(outputCap, MAX_OUTPUT_CAP), timeoutMs: Math.min(timeoutMs, MAX_TIMEOUT_MS) };
}
