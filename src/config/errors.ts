// The one error type of the config module. Every message starts with the file it is about
// (`config.lua`, `secrets.lua`, `agents/<name>.lua`) so the CLI can print it as is.

export class ConfigError extends Error {
  /** Absolute path of the file the problem is in, when there is one. */
  readonly file?: string;
  /** 1-based line in that file, when Lua reported one. */
  readonly line?: number;
  /** Dotted key path of a bad value (`providers.groq.url`), for type errors. */
  readonly keyPath?: string;

  constructor(message: string, info: { file?: string; line?: number; keyPath?: string } = {}) {
    super(message);
    this.name = 'ConfigError';
    this.file = info.file;
    this.line = info.line;
    this.keyPath = info.keyPath;
  }
}

/** Internal: a Lua value that cannot become config data, at keyPath (wrapped into ConfigError). */
export class ConvertError extends Error {
  readonly keyPath: string;
  constructor(keyPath: string, message: string) {
    super(message);
    this.keyPath = keyPath;
  }
}

/**
 * Internal: a quick Lua state (lua-state.ts) gave up on a chunk, thrown through the wasm frames
 * so no pcall catches it; the load is evaluated in the worker instead.
 */
export class NeedsWorker extends Error {}
