// loadConfig: secrets.lua, then config.lua, then the agent profile, in one Lua state that lives
// in a worker thread for the length of the load (evaluator.ts); selectAgent re-applies another
// profile over the same top level (the TUI's /agent), replaying the same secrets.lua and
// config.lua sources in a fresh state first when the profile is a file.
//
// Decisions (for clm-config(5)):
// - No config.lua ⇒ null (the program runs on flags and defaults). The Lua runtime is started
//   only after config.lua is found, so a run without config never loads wasm.
// - secrets.lua missing ⇒ clm.secrets = {}; broken or not returning a table ⇒ {} as well, but
//   the problem is logged and returned in `warnings` (config.lua still loads; providers using a
//   secret just have no key). Group/other permission bits ⇒ a debug-log warning only. Lua's
//   `near '…'` excerpt of a syntax error is left out of those messages: it may be the secret.
// - config.lua failing to load, failing at run time, not returning a table, or holding a value
//   of the wrong type ⇒ ConfigError naming the file, the line (when Lua knows it) and the problem.
// - An agent named by -a OR by the config's `agent` key that exists neither inline
//   (agents[name]) nor as agents/<name>.lua ⇒ ConfigError (a typo in a profile name must not go unnoticed).
// - A chunk running longer than 2 s ⇒ ConfigError (endless loop guard), also when it is stuck in
//   one C-level call (the worker is stopped from outside then).
// - Files are read with the regular-file reader: a FIFO or device is an error, never a hang.

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readRegularFileSync } from '../host/regular-file.js';
import { ConfigError, ConvertError } from './errors.js';
import { childPath } from './key-path.js';
import type { ConfigEvaluator } from './evaluator.js';
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
  /** The sources the top level came from, replayed before a profile file is evaluated. */
  secretsSrc: Uint8Array | null;
  configSrc: Uint8Array;
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
    // Not a plain readFileSync: a FIFO or device in place of the file would block start-up forever.
    buf = readRegularFileSync(path, MAX_CONFIG_BYTES);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') return null;
    if (err.code === 'EFBIG') throw new ConfigError(`${label}: ${path} is larger than ${MAX_CONFIG_BYTES >> 20} MiB`, { file: path });
    if (err.code === 'ENOTREG')
      throw new ConfigError(`${label}: ${path} is not a regular file (a FIFO or device is never read)`, { file: path });
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
  if (e instanceof ConvertError)
    return new ConfigError(`${label}: ${e.keyPath ? `${e.keyPath}: ` : ''}${e.message}`, { file, keyPath: e.keyPath });
  return e;
}

/** Run one file that must return a table. */
async function evalTable(lua: ConfigEvaluator, src: Uint8Array, label: string, file: string, budgetMs?: number): Promise<Table> {
  let r: Awaited<ReturnType<ConfigEvaluator['run']>>;
  try {
    r = await lua.run(src, `=${label}`, { budgetMs });
  } catch (e) {
    throw convertError(label, file, e);
  }
  if (!r.ok) throw luaError(label, file, r.message);
  if (r.luaType !== 'table') throw new ConfigError(`${label}: must return a table (it returned ${r.luaType})`, { file });
  if (!isTable(r.value)) throw new ConfigError(`${label}: must return a table of settings, not a list`, { file });
  return r.value;
}

/** secrets.lua's source, or null when there is none (or it cannot be read: a warning then). */
function readSecrets(path: string, log: (l: string) => void, warnings: string[]): Uint8Array | null {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    return null; // no secrets.lua: fine
  }
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) log(`secrets: ${path} is readable by group/other; consider chmod 600`);
  try {
    return readSource(path, 'secrets.lua');
  } catch (e) {
    const msg = `${(e as Error).message}; clm.secrets is empty`;
    warnings.push(msg);
    log(msg);
    return null;
  }
}

/** Lua quotes the source at a syntax error (`near '"sk-live-…'`): in secrets.lua that may be a secret. */
function withoutExcerpt(message: string): string {
  return message.replace(/ near '[\s\S]*'(?=[^']*$)/, ' (the text there is not shown: it may hold a secret)');
}

async function runSecrets(
  lua: ConfigEvaluator,
  src: Uint8Array,
  path: string,
  log: (l: string) => void,
  warnings: string[],
  budgetMs?: number,
): Promise<Record<string, unknown>> {
  const warn = (msg: string) => {
    warnings.push(msg);
    log(msg);
  };
  try {
    const r = await lua.run(src, '=secrets.lua', { budgetMs, lenient: true, publishAsSecrets: true });
    if (!r.ok) {
      warn(`${withoutExcerpt(luaError('secrets.lua', path, r.message).message)}; clm.secrets is empty`);
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

async function build(ld: Loaded, agentName: string | undefined, lua?: ConfigEvaluator): Promise<ClmConfig> {
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
        throw new ConfigError(`agent '${agentName}' not found (looked for ${childPath('agents', agentName)} in config.lua and ${file})`, {
          file,
        });
      }
      const profile = lua ? await evalTable(lua, src, label, file, ld.budgetMs) : await replayAndEval(ld, src, label, file);
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

  const warnings: string[] = [];
  const secretsSrc = readSecrets(paths.secrets, log, warnings);
  const lua = await startEvaluator(log);
  try {
    const secrets = secretsSrc ? await runSecrets(lua, secretsSrc, paths.secrets, log, warnings, opts.budgetMs) : {};
    const top = await evalTable(lua, src, 'config.lua', paths.config, opts.budgetMs);
    const topWarnings: string[] = [];
    validateValues(top, { label: 'config.lua', file: paths.config, prefix: '', warnings: topWarnings });
    for (const w of topWarnings) log(w);
    warnings.push(...topWarnings);

    const ld: Loaded = { secretsSrc, configSrc: src, paths, top, secrets, baseWarnings: warnings, budgetMs: opts.budgetMs, log };
    const name = opts.agent || (typeof top.agent === 'string' && top.agent !== '' ? top.agent : undefined);
    return await build(ld, name, lua);
  } finally {
    lua.close();
  }
}

async function startEvaluator(log: (l: string) => void): Promise<ConfigEvaluator> {
  const { createConfigEvaluator } = await import('./evaluator.js');
  return createConfigEvaluator(log);
}

/** A profile file evaluated later (selectAgent): a fresh state gets the same secrets.lua and config.lua first. */
async function replayAndEval(ld: Loaded, src: Uint8Array, label: string, file: string): Promise<Table> {
  const lua = await startEvaluator(ld.log);
  try {
    if (ld.secretsSrc) await runSecrets(lua, ld.secretsSrc, ld.paths.secrets, () => {}, [], ld.budgetMs);
    await evalTable(lua, ld.configSrc, 'config.lua', ld.paths.config, ld.budgetMs);
    return await evalTable(lua, src, label, file, ld.budgetMs);
  } finally {
    lua.close();
  }
}

/**
 * The same configuration with another profile applied over the top level (undefined = none).
 * Re-reads agents/<name>.lua, so edits show up. Throws ConfigError like loadConfig.
 */
export async function selectAgent(cfg: ClmConfig, agent: string | undefined): Promise<ClmConfig> {
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
