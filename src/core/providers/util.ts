// Small helpers shared by the wire adapters.

/** A short, single-line excerpt of a body for error messages (marked when cut). */
export function snippet(s: string, max = 200): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}… (${s.length} bytes)` : one;
}

/** `s` when it is valid JSON, else `fallback`. */
export function validJsonOr(s: string, fallback: string): string {
  try { JSON.parse(s); return s; } catch { return fallback; }
}

/** Parsed JSON object arguments, `{}` when unparsable or not an object. */
export function argsObject(s: string): Record<string, unknown> {
  try {
    const v = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch { return {}; }
}

/**
 * The JSON of one stream event's `data`, shared by every dialect so they agree on bad input:
 * blank data (a keep-alive) and a gateway's `[DONE]` sentinel are nothing (`null`); data that
 * is not JSON is a malformed stream and ends the turn with an error naming it.
 */
export function parseStreamData(data: string): { json: unknown } | { error: string } | null {
  const t = data.trim();
  if (t === '' || t === '[DONE]') return null;
  try { return { json: JSON.parse(t) }; } catch { return { error: `could not parse stream event: ${snippet(data)}` }; }
}

export function isObj(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A finite number, else 0 (usage counts, indices). */
export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/**
 * One SSE event of a typed-event dialect (Anthropic, Responses): its JSON object and type (the
 * object's `type`, else the SSE event name). `null` = nothing to do; `{error}` = malformed data.
 */
export function typedEvent(event: string, data: string): { type: string; o: Record<string, any> } | { error: string } | null {
  const p = parseStreamData(data);
  if (p === null || 'error' in p) return p;
  if (!isObj(p.json)) return null;
  return { type: typeof p.json.type === 'string' ? p.json.type : event, o: p.json };
}

/**
 * Ollama's answer for a model without tool support (400, "… does not support tools"). Servers
 * behind every dialect pass it on, so each adapter recognises it.
 */
export function saysToolsUnsupported(status: number, body: string): boolean {
  return status === 400 && /does not support tools/i.test(body);
}
