// Parsers for what servers tell about themselves: llama.cpp /props and the /v1/models list.

import { fromJson } from './providers/util.js';

/** Context size per slot from llama.cpp /props, or null when the body is not a llama.cpp props reply. */
export function parseProps(body: string | null | undefined): number | null {
  return fromJson(body ?? '', (o) => {
    if (!o || typeof o !== 'object' || o.build_info === undefined) return null;
    const nCtx = Number(o.default_generation_settings?.n_ctx);
    if (!Number.isFinite(nCtx) || nCtx <= 0) return null;
    const slots = Number(o.total_slots);
    return Math.floor(Number.isFinite(slots) && slots > 1 ? nCtx / slots : nCtx);
  });
}

/** Model ids in response order from `{"data":[{"id":…}]}`; null for any other shape or an empty list. */
export function parseModelsList(body: string | null | undefined): string[] | null {
  return fromJson(body ?? '', (o) => {
    if (!o || !Array.isArray(o.data)) return null;
    const ids: string[] = [];
    for (const e of o.data) if (e && typeof e.id === 'string') ids.push(e.id);
    return ids.length ? ids : null;
  });
}
