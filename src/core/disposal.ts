// `using agent = createAgent(…)` for callers whose runtime and TypeScript lib know Symbol.dispose,
// without making the published types need that lib (esnext.disposable): the method is keyed by
// whatever `Symbol.dispose` is in the caller's lib, and is absent from the types where it is not.

type DisposeKey = SymbolConstructor extends { readonly dispose: infer K extends symbol } ? K : never;

/** `{ [Symbol.dispose](): void }` where the caller's lib declares Symbol.dispose, else `{}`. */
export type Disposal = { [K in DisposeKey]: () => void };

/** Give `cls` a `[Symbol.dispose]()` that calls `close()`, where the runtime has Symbol.dispose. */
export function addDispose(cls: { prototype: { close(): void } }): void {
  const key = (Symbol as { dispose?: symbol }).dispose;
  if (typeof key !== 'symbol') return;
  Object.defineProperty(cls.prototype, key, {
    value(this: { close(): void }) {
      this.close();
    },
    writable: true,
    configurable: true,
  });
}
