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
