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
// - With a cache directory (the CLI gives its state dir), an evaluation whose inputs did not
//   change is taken from the evaluation cache (config-cache.ts) without starting Lua: secrets.lua
//   is then read by literal-chunk.ts, which takes only a plain literal table (anything else is
//   evaluated, and nothing is cached). A miss evaluates as usual, then twice more with sentinel
//   secrets (sorting high and low), each in a state of its own, and stores the first sentinel
//   form only when substituting the real values into either gives exactly the real result and
//   none of the values appears in it.

import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { findEntry, sha256, storeEntry, type CacheEntry } from './config-cache.js';
import { ConfigError, ConvertError } from './errors.js';
import { childPath } from './key-path.js';
import type { ConfigEvaluator } from './evaluator.js';
import { chunkStrings, chunkWords, readLiteralChunk } from './literal-chunk.js';
import { redact } from '../host/redact.js';
import {
  cacheLookup,
  readInputs,
  readSecrets,
  readSource,
  sentinelValues,
  type CacheLookup,
  type Inputs,
  type LoadConfigOptions,
} from './load-inputs.js';
import { mergeProfile } from './merge.js';
import { configDir, configPaths, type ConfigPaths } from './paths.js';
import { collectSecrets } from './resolve-connection.js';
import { containsAny, luaLiteral, makeSentinels, secretAt, substitute, type Sentinels } from './secret-sentinels.js';
import type { ClmConfig } from './types.js';
import { isTable, own, validateValues, type Table } from './validate.js';

export { configCacheAnswers, MAX_CONFIG_BYTES, type LoadConfigOptions } from './load-inputs.js';

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

/** What a load keeps of its inputs, with the top level evaluated (or taken from the cache). */
function loadedFrom(inp: Inputs, top: Table, secrets: Record<string, unknown>, baseWarnings: string[]): Loaded {
  return {
    secretsSrc: inp.secretsSrc,
    configSrc: inp.src,
    paths: inp.paths,
    top,
    secrets,
    baseWarnings,
    budgetMs: inp.budgetMs,
    log: inp.log,
  };
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
  // Lua's message can quote the file's own strings (`error("bad key " .. k)`): every string the
  // file spells out is masked in it, as its values would be (the file name and line stay).
  const spelled = [...(chunkStrings(src) ?? [])];
  const masked = (message: string) => {
    const at = /^secrets\.lua(?::\d+)?: /.exec(message)?.[0] ?? '';
    return at + redact(message.slice(at.length), spelled);
  };
  const warn = (msg: string) => {
    warnings.push(msg);
    log(msg);
  };
  try {
    const r = await lua.run(src, '=secrets.lua', { budgetMs, lenient: true, publishAsSecrets: true });
    if (!r.ok) {
      warn(`${masked(withoutExcerpt(luaError('secrets.lua', path, r.message).message))}; clm.secrets is empty`);
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

/** How a profile file becomes its table: evaluated now, replayed later, or taken from the cache. */
type ProfileSource = (src: Uint8Array, label: string, file: string) => Promise<Table>;

async function build(ld: Loaded, agentName: string | undefined, profileOf: ProfileSource): Promise<ClmConfig> {
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
      const profile = await profileOf(src, label, file);
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

/** Thrown inside a cache hit whose profile file changed: the load evaluates instead. */
class StaleEntry extends Error {}

/**
 * Whether a source mentions one of the secret values as a string or a name. Sentinels cannot
 * show a comparison with a constant (`clm.secrets.mode == "dev"`) when the value at caching time
 * did not match it; with a value the source mentions, the entry is not trusted.
 */
function mentionsAny(src: Uint8Array, values: readonly string[]): boolean {
  const words = chunkWords(src);
  return !words || values.some((v) => words.has(v));
}

/** The top level checked, its warnings logged and added to the load's. */
function checkedTop(inp: Inputs, top: Table, warnings: string[]): void {
  const topWarnings: string[] = [];
  validateValues(top, { label: 'config.lua', file: inp.paths.config, prefix: '', warnings: topWarnings });
  for (const w of topWarnings) inp.log(w);
  warnings.push(...topWarnings);
}

const profileName = (inp: Inputs, top: Table) => inp.agent || (typeof top.agent === 'string' && top.agent !== '' ? top.agent : undefined);

/** The configuration from a cache entry, or null when there is none (or it no longer fits). */
async function fromCache(inp: Inputs, c: CacheLookup): Promise<ClmConfig | null> {
  const entry = findEntry(c.dir, c.id);
  if (!entry) return null;
  const values = sentinelValues(entry, c.secrets);
  if (!values || mentionsAny(inp.src, values)) return null;
  const top = substitute(entry.top, entry.marker, values) as Table;
  const warnings = [...inp.warnings];
  checkedTop(inp, top, warnings);
  const ld = loadedFrom(inp, top, c.secrets, warnings);
  try {
    const cfg = await build(ld, profileName(inp, top), async (src, _label, file) => {
      const p = entry.profile;
      if (!p || p.path !== file || p.sha256 !== sha256(src) || !entry.profileTable || mentionsAny(src, values)) throw new StaleEntry();
      return substitute(entry.profileTable, entry.marker, values) as Table;
    });
    inp.log(`config: evaluation taken from the cache in ${c.dir}`);
    return cfg;
  } catch (e) {
    if (e instanceof StaleEntry) return null;
    throw e;
  }
}

/**
 * Load config.lua (with secrets.lua and the agent profile). Returns null when there is no
 * config.lua or no config directory can be determined. Throws ConfigError for a broken config.
 */
export async function loadConfig(opts: LoadConfigOptions = {}): Promise<ClmConfig | null> {
  const log = opts.log ?? (() => {});
  const inp = readInputs(opts, log);
  if (!inp) return null;
  const lookup = cacheLookup(inp, opts.cacheDir);
  if (typeof lookup === 'string') log(`config: ${lookup}; the evaluation cache is not used`);
  const cache = typeof lookup === 'string' ? null : lookup;
  if (cache) {
    const cfg = await fromCache(inp, cache);
    if (cfg) return cfg;
    log('config: no cached evaluation fits; evaluating in the Lua worker');
  }

  const lua = await startEvaluator(log);
  try {
    const warnings = [...inp.warnings];
    const secrets = inp.secretsSrc ? await runSecrets(lua, inp.secretsSrc, inp.paths.secrets, log, warnings, opts.budgetMs) : {};
    const top = await evalTable(lua, inp.src, 'config.lua', inp.paths.config, opts.budgetMs);
    checkedTop(inp, top, warnings);

    const ld = loadedFrom(inp, top, secrets, warnings);
    let read: ProfileRead | null = null;
    const cfg = await build(ld, profileName(inp, top), async (src, label, file) => {
      const table = await evalTable(lua, src, label, file, opts.budgetMs);
      read = { src, label, file, table };
      return table;
    });
    if (cache) await remember(lua, inp, cache, cfg, ld, read);
    return cfg;
  } finally {
    lua.close();
  }
}

/**
 * clm.secrets when there is no config.lua. Nothing reads the values then, but a tool can still
 * print the file (`cat secrets.lua`), so they are masked all the same. A plain literal table is
 * read without Lua; only a secrets.lua that is code starts the Lua worker. Problems are warnings,
 * as in a full load.
 */
export async function secretsWithoutConfig(
  opts: LoadConfigOptions = {},
): Promise<{ secrets: Record<string, unknown>; warnings: string[] }> {
  const log = opts.log ?? (() => {});
  const warnings: string[] = [];
  const dir = opts.dir ?? configDir(opts.env ?? process.env);
  const src = dir ? readSecrets(configPaths(dir).secrets, log, warnings) : null;
  if (!dir || !src) return { secrets: {}, warnings };
  const literal = readLiteralChunk(src);
  if (literal) return { secrets: isTable(literal.value) ? literal.value : {}, warnings };
  const lua = await startEvaluator(log);
  try {
    return { secrets: await runSecrets(lua, src, configPaths(dir).secrets, log, warnings, opts.budgetMs), warnings };
  } finally {
    lua.close();
  }
}

/** The profile file an evaluation read. */
interface ProfileRead {
  src: Uint8Array;
  label: string;
  file: string;
  table: Table;
}

/**
 * Evaluate twice more with sentinel secrets, sorting high and low (secret-sentinels.ts), each in
 * a state of its own in the worker, and store the first when both are faithful: substituting the
 * real values must give exactly what the real evaluation gave, no library call may have looked
 * into a secret, and no secret (nor an api_key written into config.lua itself) may appear in
 * what is stored. Never throws; why not is logged.
 */
async function remember(
  lua: ConfigEvaluator,
  inp: Inputs,
  c: CacheLookup,
  cfg: ClmConfig,
  ld: Loaded,
  read: ProfileRead | null,
): Promise<void> {
  const why = await sentinelEntry(lua, inp, c, cfg, ld, read).catch((e: unknown) => `${(e as Error)?.message ?? e}`);
  if (typeof why === 'string') inp.log(`config: not cached: ${why}`);
  else if (storeEntry(c.dir, why, inp.log)) inp.log(`config: evaluation cached in ${c.dir}`);
}

/** What one evaluation with sentinel secrets gave: config.lua's table and the profile file's. */
interface SentinelRun {
  s: Sentinels;
  top: Table;
  profile?: Table;
}

/** Evaluate secrets, config.lua and the profile file read with the sentinels `s`; why not, when it does not fit. */
async function sentinelRun(
  lua: ConfigEvaluator,
  inp: Inputs,
  ld: Loaded,
  read: ProfileRead | null,
  s: Sentinels,
): Promise<SentinelRun | string> {
  const values = s.paths.map((p) => secretAt(ld.secrets, p) as string);
  const run = async (
    src: Uint8Array,
    label: string,
    extra: { lenient?: boolean; publishAsSecrets?: boolean } = {},
  ): Promise<Table | string> => {
    const r = await lua.run(src, `=${label}`, { budgetMs: inp.budgetMs, probe: s.marker, ...extra });
    if (r.inspected) return `${label} looks into a secret's value (a string library call is given one)`;
    if (r.varies) return `${label}'s result may differ from run to run (it calls ${r.varies})`;
    if (!r.ok) return `${label} fails with sentinel secrets`;
    if (!isTable(r.value)) return `${label} returns something else with sentinel secrets`;
    return r.value;
  };
  const secrets = await run(new TextEncoder().encode(luaLiteral(s.table)), 'sentinel secrets', { lenient: true, publishAsSecrets: true });
  if (typeof secrets === 'string') return secrets;
  const top = await run(inp.src, 'config.lua');
  if (typeof top === 'string') return top;
  if (!isDeepStrictEqual(substitute(top, s.marker, values), ld.top)) return "config.lua's result depends on more than where the secrets go";
  if (!read) return { s, top };
  const profile = await run(read.src, read.label);
  if (typeof profile === 'string') return profile;
  if (!isDeepStrictEqual(substitute(profile, s.marker, values), read.table))
    return `${read.label}'s result depends on more than where the secrets go`;
  return { s, top, profile };
}

async function sentinelEntry(
  lua: ConfigEvaluator,
  inp: Inputs,
  c: CacheLookup,
  cfg: ClmConfig,
  ld: Loaded,
  read: ProfileRead | null,
): Promise<CacheEntry | string> {
  // The cache is only as right as secrets.lua read without Lua: it must agree with Lua here.
  if (!isDeepStrictEqual(c.secrets, ld.secrets)) return 'secrets.lua read without Lua differs from its evaluation';
  const high = await sentinelRun(lua, inp, ld, read, makeSentinels(ld.secrets, randomBytes(8).toString('hex'), 'high'));
  if (typeof high === 'string') return high;
  // An order a file puts a secret in (`<`, `<=`) is the same for both sets only when it does not matter.
  const low = await sentinelRun(lua, inp, ld, read, makeSentinels(ld.secrets, randomBytes(8).toString('hex'), 'low'));
  if (typeof low === 'string') return `${low} (with sentinels sorting low)`;
  const { s, top, profile } = high;
  const entry: CacheEntry = { scope: c.id.scope, key: c.id.key, profile: null, marker: s.marker, paths: s.paths, top };
  if (read && profile) {
    entry.profile = { path: read.file, sha256: sha256(read.src) };
    entry.profileTable = profile;
  }
  const json = JSON.stringify(entry);
  if (!isDeepStrictEqual(JSON.parse(json), entry)) return 'the result holds values JSON cannot (infinity, NaN, -0)';
  if (containsAny(json, collectSecrets(cfg)))
    return 'the result would hold a secret value (an api_key written into the file, or a secret used as a key)';
  return entry;
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
  return build(ld, agent || undefined, (src, label, file) => replayAndEval(ld, src, label, file));
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
