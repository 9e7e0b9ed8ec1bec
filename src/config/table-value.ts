// A Lua table's plain value, by the rules of lua-value.ts: shared with the files read without Lua
// (literal-config.ts), which must give the same value and the same key order.

/**
 * A table's entries (its non-nil values under string and integer keys, each key once) as a plain
 * value: an array when `isList` (the keys are exactly 1..n, n >= 1), else an object with sorted keys.
 */
export function tableValue(entries: [string | number, unknown][], isList: boolean): unknown[] | Record<string, unknown> {
  if (isList && entries.length > 0) {
    const arr = new Array<unknown>(entries.length);
    for (const [k, v] of entries) arr[(k as number) - 1] = v;
    return arr;
  }
  const obj: Record<string, unknown> = {};
  entries.sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0));
  for (const [k, v] of entries) {
    // defineProperty: a key named "__proto__" must stay a plain key
    Object.defineProperty(obj, String(k), { value: v, enumerable: true, writable: true, configurable: true });
  }
  return obj;
}
