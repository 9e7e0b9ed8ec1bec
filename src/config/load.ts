// loadConfig: secrets.lua, then config.lua, then the agent profile, in one Lua state;
// selectAgent re-applies another profile over the same top level (the TUI's /agent), replaying
// the same secrets.lua and config.lua sources in a fresh state first when the profile is a file.
// The state is a quick one on the main thread (lua-state.ts); when it gives up on a file, the
// load starts over in the worker thread (evaluator.ts), where a watchdog can stop anything.
//
// Decisions (for clm-config(5)):
// - No config.lua ⇒ null (the program runs on flags and defaults). The Lua runtime is started
//   only for a config.lua or a secrets.lua, so a run without either never loads wasm.
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
// - The quick state is made when a load starts, not as clm starts: the UI draws its first frame
//   before it reads the config, and the main thread's share of compiling the wasm module would
//   come before that frame.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, NeedsWorker } from './errors.js';
import { LiteralConfig, NotLiteral } from './literal-config.js';
import type { ChunkOutcome, RunOptions } from './eval-protocol.js';
import type { ConfigLua } from './lua-state.js';
import { childPath } from './key-path.js';
import { chunkStrings } from './lua-strings.js';
import { redact } from '../host/redact.js';
import { readSecrets, readSource, type LoadConfigOptions } from './load-inputs.js';
import { mergeProfile } from './merge.js';
import { configDir, configPaths, type ConfigPaths } from './paths.js';
import type { ClmConfig } from './types.js';
import { isTable, own, validateValues, type Table } from './validate.js';

export { MAX_CONFIG_BYTES, type LoadConfigOptions } from './load-inputs.js';

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

/** Lua's message with the file name in front (when Lua did not already put it there) and the line. */
function luaError(label: string, file: string, message: string): ConfigError {
  const m = new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+):`).exec(message);
  if (m) return new ConfigError(message, { file, line: Number(m[1]) });
  return new ConfigError(`${label}: ${message}`, { file });
}

/** The error of a chunk that failed: Lua's own, or a value that cannot become config data. */
function chunkError(label: string, file: string, r: { message: string; keyPath?: string }): ConfigError {
  if (r.keyPath === undefined) return luaError(label, file, r.message);
  return new ConfigError(`${label}: ${r.keyPath ? `${r.keyPath}: ` : ''}${r.message}`, { file, keyPath: r.keyPath });
}

/** The table one file returned (it must return one). */
function tableOf(r: ChunkOutcome, label: string, file: string): Table {
  if (!r.ok) throw chunkError(label, file, r);
  if (r.luaType !== 'table') throw new ConfigError(`${label}: must return a table (it returned ${r.luaType})`, { file });
  if (!isTable(r.value)) throw new ConfigError(`${label}: must return a table of settings, not a list`, { file });
  return r.value;
}

/** Runs one chunk in the state of a load, after the ones before it. */
type RunChunk = (src: Uint8Array, chunkName: string, opts: RunOptions) => Promise<ChunkOutcome>;

/** Run one file that must return a table. */
async function evalTable(run: RunChunk, src: Uint8Array, label: string, file: string, budgetMs?: number): Promise<Table> {
  return tableOf(await run(src, `=${label}`, { budgetMs }), label, file);
}

/** Lua quotes the source at a syntax error (`near '"sk-live-…'`): in secrets.lua that may be a secret. */
function withoutExcerpt(message: string): string {
  return message.replace(/ near '[\s\S]*'(?=[^']*$)/, ' (the text there is not shown: it may hold a secret)');
}

/** Run secrets.lua, publishing its table as clm.secrets for the chunks after it. */
function runSecrets(run: RunChunk, src: Uint8Array, budgetMs?: number): Promise<ChunkOutcome> {
  return run(src, '=secrets.lua', { budgetMs, lenient: true, publishAsSecrets: true });
}

/** clm.secrets from secrets.lua's outcome; a problem is a warning and leaves it empty. */
function secretsOf(r: ChunkOutcome, src: Uint8Array, path: string, log: (l: string) => void, warnings: string[]): Record<string, unknown> {
  const warn = (msg: string) => {
    warnings.push(`${msg}; clm.secrets is empty`);
    log(`${msg}; clm.secrets is empty`);
    return {};
  };
  if (!r.ok) {
    if (r.keyPath !== undefined) return warn(chunkError('secrets.lua', path, r).message);
    // Lua's message can quote the file's own strings (`error("bad key " .. k)`): every string the
    // file spells out is masked in it, as its values would be (the file name and line stay).
    const message = withoutExcerpt(luaError('secrets.lua', path, r.message).message);
    const at = /^secrets\.lua(?::\d+)?: /.exec(message)?.[0] ?? '';
    return warn(at + redact(message.slice(at.length), [...(chunkStrings(src) ?? [])]));
  }
  if (r.luaType !== 'table') return warn(`secrets.lua: must return a table (it returned ${r.luaType})`);
  return isTable(r.value) ? r.value : {};
}

/**
 * Evaluate with `attempt`: without Lua when every file is a table of literals (literal-config.ts),
 * else in a quick state on this thread; when that gives up (lua-state.ts), all over again in the
 * worker, so each file's outcome comes from one evaluator. What an attempt notes is held back
 * until it has finished one way or the other.
 */
async function evaluate<T>(log: (line: string) => void, attempt: Attempt<T>): Promise<T> {
  const literal = new LiteralConfig();
  const plain = await heldAttempt(log, attempt, async (src, name, opts) => literal.run(src, name, opts), NotLiteral);
  if ('value' in plain) {
    log('config: read without Lua (every file is a table of literals)');
    return plain.flush();
  }
  let quick: ConfigLua | null = null;
  try {
    quick = await (await import('./lua-state.js')).ConfigLua.create({ quick: true });
  } catch {
    // the worker reports why
  }
  if (quick) {
    const q = await heldAttempt(log, attempt, async (src, name, opts) => quick.run(src, name, opts), NeedsWorker);
    if ('value' in q) return q.flush();
    log(`config: ${q.declined.message}; evaluating in the worker thread`);
  }
  const { ConfigEvaluator } = await import('./evaluator.js');
  const worker = new ConfigEvaluator(log);
  try {
    return await attempt((src, name, opts) => worker.run(src, name, opts), log);
  } finally {
    worker.close();
  }
}

type Attempt<T> = (run: RunChunk, note: (line: string) => void) => Promise<T>;

/**
 * `attempt` with one evaluator, its notes held back: on success they are logged by flush(), which
 * gives the value; when the evaluator declines (an error of class `declines`) they are dropped,
 * as the next evaluator notes them again. Any other failure logs them and is thrown.
 */
async function heldAttempt<T>(
  log: (line: string) => void,
  attempt: Attempt<T>,
  run: RunChunk,
  declines: new (...args: never[]) => Error,
): Promise<{ value: T; flush(): T } | { declined: Error }> {
  const held: string[] = [];
  try {
    const value = await attempt(run, (line) => held.push(line));
    return {
      value,
      flush: () => {
        for (const line of held) log(line);
        return value;
      },
    };
  } catch (e) {
    if (e instanceof declines) return { declined: e };
    for (const line of held) log(line);
    throw e;
  }
}

/** File names cannot escape agents/: a name with a path separator or a leading dot has no file. */
const fileableName = (name: string) => name !== '' && !/[/\\\0]/.test(name) && !name.startsWith('.');

/** How a profile file becomes its table: evaluated now, or replayed later. */
type ProfileSource = (src: Uint8Array, label: string, file: string) => Promise<Table>;

async function build(ld: Loaded, agentName: string | undefined, profileOf: ProfileSource, log: (line: string) => void): Promise<ClmConfig> {
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
  for (const w of warnings.slice(ld.baseWarnings.length)) log(w);
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
  const log = opts.log ?? (() => {});
  const dir = opts.dir ?? configDir(opts.env ?? process.env);
  if (!dir) return null;
  const paths = configPaths(dir);
  const configSrc = readSource(paths.config, 'config.lua');
  if (!configSrc) return null;
  const base: string[] = [];
  const secretsSrc = readSecrets(paths.secrets, log, base);
  const { budgetMs } = opts;
  return evaluate(log, async (run, note) => {
    const warnings = [...base];
    const secrets = secretsSrc ? secretsOf(await runSecrets(run, secretsSrc, budgetMs), secretsSrc, paths.secrets, note, warnings) : {};
    const top = await evalTable(run, configSrc, 'config.lua', paths.config, budgetMs);
    const topWarnings: string[] = [];
    validateValues(top, { label: 'config.lua', file: paths.config, prefix: '', warnings: topWarnings });
    for (const w of topWarnings) note(w);
    warnings.push(...topWarnings);
    const ld: Loaded = { secretsSrc, configSrc, paths, top, secrets, baseWarnings: warnings, budgetMs, log };
    const agent = opts.agent || (typeof top.agent === 'string' && top.agent !== '' ? top.agent : undefined);
    return build(ld, agent, (src, label, file) => evalTable(run, src, label, file, budgetMs), note);
  });
}

/**
 * clm.secrets when there is no config.lua. Nothing reads the values then, but a tool can still
 * print the file (`cat secrets.lua`), so they are masked all the same. Problems are warnings, as
 * in a full load.
 */
export async function secretsWithoutConfig(
  opts: LoadConfigOptions = {},
): Promise<{ secrets: Record<string, unknown>; warnings: string[] }> {
  const log = opts.log ?? (() => {});
  const base: string[] = [];
  const dir = opts.dir ?? configDir(opts.env ?? process.env);
  const path = dir ? configPaths(dir).secrets : null;
  const src = path ? readSecrets(path, log, base) : null;
  if (!path || !src) return { secrets: {}, warnings: base };
  return evaluate(log, async (run, note) => {
    const warnings = [...base];
    return { secrets: secretsOf(await runSecrets(run, src, opts.budgetMs), src, path, note, warnings), warnings };
  });
}

/** A profile file evaluated later (selectAgent): a fresh state gets the same secrets.lua and config.lua first. */
function replayAndEval(ld: Loaded, src: Uint8Array, label: string, file: string): Promise<Table> {
  return evaluate(ld.log, async (run) => {
    if (ld.secretsSrc) await runSecrets(run, ld.secretsSrc, ld.budgetMs);
    await evalTable(run, ld.configSrc, 'config.lua', ld.paths.config, ld.budgetMs);
    return evalTable(run, src, label, file, ld.budgetMs);
  });
}

/**
 * The same configuration with another profile applied over the top level (undefined = none).
 * Re-reads agents/<name>.lua, so edits show up. Throws ConfigError like loadConfig.
 */
export async function selectAgent(cfg: ClmConfig, agent: string | undefined): Promise<ClmConfig> {
  const ld = internals.get(cfg);
  if (!ld) throw new ConfigError('selectAgent: not a configuration returned by loadConfig');
  return build(ld, agent || undefined, (src, label, file) => replayAndEval(ld, src, label, file), ld.log);
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
