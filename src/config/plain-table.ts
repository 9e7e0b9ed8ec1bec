// How the entries of a Lua table become a plain JS value: the one rule shared by the conversion
// of a live Lua table (lua-value.ts) and the reading of a literal secrets.lua without Lua
// (literal-chunk.ts), so both give the same value for the same table.
//
// - keys exactly the integers 1..n (n >= 1) ⇒ an array, in order;
// - anything else ⇒ an object: keys as their decimal or string text, sorted so the result does
//   not depend on Lua's hash order; no entries ⇒ {}.

export type TableKey = string | number;

/** Builds one table's value from its (key, value) entries in any order. */
export class PlainTable {
  private readonly entries: [TableKey, unknown][] = [];
  private intKeys = true;
  private maxInt = 0;

  /** A key that cannot be represented (a boolean or table key): the table is an object. */
  skipKey(): void {
    this.intKeys = false;
  }

  /** An integer-valued key whose value was left out: a list would have a hole. */
  dropIndex(): void {
    this.intKeys = false;
  }

  /** key is a string, an integer, or a float already turned into its text. */
  add(key: TableKey, value: unknown, integerKey: boolean): void {
    if (typeof key === 'number' && integerKey) {
      if (key >= 1) this.maxInt = Math.max(this.maxInt, key);
      else this.intKeys = false;
    } else {
      this.intKeys = false;
    }
    this.entries.push([key, value]);
  }

  value(): unknown[] | Record<string, unknown> {
    const entries = this.entries;
    if (this.intKeys && entries.length > 0 && this.maxInt === entries.length) {
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
}
