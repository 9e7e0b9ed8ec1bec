// loadConfig: secrets.lua, then config.lua, then the agent profile, all in one long-lived Lua
// state; selectAgent re-applies another profile over the same top level (the TUI's /agent).
//
// Decisions (for clm-config(5)):
// - No config.lua ⇒ null (the program runs on flags and defaults). The Lua runtime is imported
//   only after config.lua is found, so a run without config never loads wasm.
// - secrets.lua missing ⇒ clm.secrets = {}; broken or not returning a table ⇒ {} as well, but
//   the problem is logged and returned in `warnings` (config.lua still loads; providers using a
//   secret just have no key). Group/other permission bits ⇒ a debug-log warning only.
// - config.lua failing to load, failing at run time, not returning a table, or holding a value
//   of the wrong type ⇒ ConfigError naming the file, the line (when Lua knows it) and the problem.
// - An agent named by -a OR by the config's `agent` key that exists neither inline
//   (agents[name]) nor as agents/<name>.lua ⇒ ConfigError (the original silently ignored it).
// - A chunk running longer than 2 s ⇒ ConfigError (endless loop guard).

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, ConvertError } from './errors.js';
import { childPath } from './key-path.js';
import type { ConfigLua } from './lua-state.js';
import { mergeProfile } from './merge.js';
import { configDir, configPaths, type ConfigPaths } from './paths.js';
import type { ClmConfig } from './types.js';
import { isTable, own, validateValues, type Table } from './validate.js';

/** Config files above this size are refused (parsing is not covered by the time limit). */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

export interface LoadConfigOptions {
  /** The clm config directory; default $XDG_CONFIG_HOME/clm or $HOME/.config/clm. */
  dir?: string;
  /** Agent profile (-a); overrides the config's `agent` key. */
  agent?: string;
  /** Debug log (CLM_DEBUG_LOG); receives warnings and the secrets permission notice. */
  log?: (line: string) => void;
  /** Time limit per chunk (default 2000 ms). */
  budgetMs?: number;
  /** Where XDG_CONFIG_HOME/HOME are read from when `dir` is not given (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/** What selectAgent needs to apply another profile later. Kept out of the plain ClmConfig. */
interface Loaded {
  lua: ConfigLua;
  paths: ConfigPaths;
  top: Table;
  secrets: Record<string, unknown>;
  baseWarnings: string[];
  budgetMs?: number;
  log: (line: string) => void;
}
const internals = new WeakMap<ClmConfig, Loaded>();

/** Source bytes, or null when the file does not exist. BOM and a `#!` first line are blanked. */
function readSource(path: string, label: string): Uint8Array | null {
  let buf: Buffer;
  try {
    if (statSync(path).size > MAX_CONFIG_BYTES) throw new ConfigError(`${label}: ${path} is larger than ${MAX_CONFIG_BYTES >> 20} MiB`, { file: path });
    buf = readFileSync(path);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') return null;
    throw new ConfigError(`${label}: cannot read ${path}: ${err.code ?? err.message}`, { file: path });
  }
  let start = 0;
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) start = 3;
  const src = new Uint8Array(buf.subarray(start));
  // luaL_loadfile skips a first line starting with '#'; keep its newline so line numbers hold.
  if (src[0] === 0x23) for (let i = 0; i < src.length && src[i] !== 0x0a; i++) src[i] = 0x20;
  return src;
}

/** Lua's message with the file name in front (when Lua did not already put it there) and the line. */
function luaError(label: string, file: string, message: string): ConfigError {
  const m = new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+):`).exec(message);
  if (m) return new ConfigError(message, { file, line: Number(m[1]) });
  return new ConfigError(`${label}: ${message}`, { file });
}

function convertError(label: string, file: string, e: unknown): unknown {
  if (e instanceof ConvertError) return new ConfigError(`${label}: ${e.keyPath ? `${e.keyPath}: ` : ''}${e.message}`, { file, keyPath: e.keyPath });
  return e;
}

/** Run one file that must return a table. */
function evalTable(lua: ConfigLua, src: Uint8Array, label: string, file: string, budgetMs?: number): Table {
  let r;
  try {
    r = lua.run(src, `=${label}`, { budgetMs });
  } catch (e) {
    throw convertError(label, file, e);
  }
  if (!r.ok) throw luaError(label, file, r.message);
  if (r.luaType !== 'table') throw new ConfigError(`${label}: must return a table (it returned ${r.luaType})`, { file });
  if (!isTable(r.value)) throw new ConfigError(`${label}: must return a table of settings, not a list`, { file });
  return r.value;
}

function loadSecrets(lua: ConfigLua, path: string, log: (l: string) => void, warnings: string[], budgetMs?: number): Record<string, unknown> {
  const warn = (msg: string) => { warnings.push(msg); log(msg); };
  let st;
  try {
    st = statSync(path);
  } catch {
    return {}; // no secrets.lua: fine
  }
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) log(`secrets: ${path} is readable by group/other; consider chmod 600`);
  let src: Uint8Array | null;
  try {
    src = readSource(path, 'secrets.lua');
  } catch (e) {
    warn(`${(e as Error).message}; clm.secrets is empty`);
    return {};
  }
  if (!src) return {};
  try {
    const r = lua.run(src, '=secrets.lua', { budgetMs, lenient: true, publishAsSecrets: true });
    if (!r.ok) {
      warn(`${luaError('secrets.lua', path, r.message).message}; clm.secrets is empty`);
      return {};
    }
    if (r.luaType !== 'table') {
      warn(`secrets.lua: must return a table (it returned ${r.luaType}); clm.secrets is empty`);
      return {};
    }
    return isTable(r.value) ? r.value : {};
  } catch (e) {
    warn(`${(convertError('secrets.lua', path, e) as Error).message}; clm.secrets is empty`);
    return {};
  }
}

/** File names cannot escape agents/: a name with a path separator or a leading dot has no file. */
const fileableName = (name: string) => name !== '' && !/[/\\\0]/.test(name) && !name.startsWith('.');

function build(ld: Loaded, agentName: string | undefined): ClmConfig {
  const { paths, top } = ld;
  const warnings = [...ld.baseWarnings];
  let effective = top;
  let profilePath: string | undefined;
  if (agentName) {
    const agents = isTable(top.agents) ? top.agents : {};
    if (own(agents, agentName)) {
      const profile = agents[agentName] as Table; // validateValues checked it is a table
      validateValues(profile, { label: 'config.lua', file: paths.config, prefix: childPath('agents', agentName), warnings });
      effective = mergeProfile(top, profile);
      profilePath = paths.config;
    } else {
      const file = join(paths.agents, `${agentName}.lua`);
      const label = `agents/${agentName}.lua`;
      const src = fileableName(agentName) ? readSource(file, label) : null;
      if (!src) {
        throw new ConfigError(`agent '${agentName}' not found (looked for ${childPath('agents', agentName)} in config.lua and ${file})`, { file });
      }
      const profile = evalTable(ld.lua, src, label, file, ld.budgetMs);
      validateValues(profile, { label, file, prefix: '', warnings });
      effective = mergeProfile(top, profile);
      profilePath = file;
    }
  }
  for (const w of warnings.slice(ld.baseWarnings.length)) ld.log(w);
  // Both halves are valid on their own and no check spans keys, so this cannot fail.
  const values = validateValues(effective, { label: 'config.lua', file: paths.config, prefix: '' });
  const cfg: ClmConfig = {
    ...values,
    agent: agentName,
    dir: paths.dir,
    configPath: paths.config,
    secretsPath: paths.secrets,
    secrets: ld.secrets,
    raw: effective,
    warnings,
  };
  if (profilePath) cfg.profilePath = profilePath;
  if (!agentName) delete cfg.agent;
  internals.set(cfg, ld);
  return cfg;
}

/**
 * Load config.lua (with secrets.lua and the agent profile). Returns null when there is no
 * config.lua or no config directory can be determined. Throws ConfigError for a broken config.
 */
export async function loadConfig(opts: LoadConfigOptions = {}): Promise<ClmConfig | null> {
  const dir = opts.dir ?? configDir(opts.env ?? process.env);
  if (!dir) return null;
  const paths = configPaths(dir);
  const src = readSource(paths.config, 'config.lua');
  if (!src) return null;
  const log = opts.log ?? (() => {});

  const { ConfigLua } = await import('./lua-state.js');
  const lua = await ConfigLua.create();
  const warnings: string[] = [];
  const secrets = loadSecrets(lua, paths.secrets, log, warnings, opts.budgetMs);
  const top = evalTable(lua, src, 'config.lua', paths.config, opts.budgetMs);
  const topWarnings: string[] = [];
  validateValues(top, { label: 'config.lua', file: paths.config, prefix: '', warnings: topWarnings });
  for (const w of topWarnings) log(w);
  warnings.push(...topWarnings);

  const ld: Loaded = { lua, paths, top, secrets, baseWarnings: warnings, budgetMs: opts.budgetMs, log };
  const name = opts.agent || (typeof top.agent === 'string' && top.agent !== '' ? top.agent : undefined);
  return build(ld, name);
}

/**
 * The same configuration with another profile applied over the top level (undefined = none).
 * Re-reads agents/<name>.lua, so edits show up. Throws ConfigError like loadConfig.
 */
export function selectAgent(cfg: ClmConfig, agent: string | undefined): ClmConfig {
  const ld = internals.get(cfg);
  if (!ld) throw new ConfigError('selectAgent: not a configuration returned by loadConfig');
  return build(ld, agent || undefined);
}

/** Profile names for completion and listings: inline agents[...] and agents/*.lua, sorted. */
export function listAgents(cfg: ClmConfig): string[] {
  const ld = internals.get(cfg);
  const names = new Set<string>(isTable(ld?.top.agents) ? Object.keys(ld.top.agents) : []);
  try {
    for (const f of readdirSync(join(cfg.dir, 'agents'))) if (f.endsWith('.lua') && f.length > 4) names.add(f.slice(0, -4));
  } catch {
    // no agents/ directory
  }
  return [...names].sort();
}

/** Every configured `provider/model-id` (providers[p].models), sorted. */
export function listModelSpecs(cfg: ClmConfig): string[] {
  const out: string[] = [];
  for (const p of Object.keys(cfg.providers)) for (const id of Object.keys(cfg.providers[p].models)) out.push(`${p}/${id}`);
  return out.sort();
}
