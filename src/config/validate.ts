// Type checks for every clm-config(5) key, turning a converted Lua table into ConfigValues.
// A wrong type is a ConfigError naming the file and key path, e.g.
// `config.lua: providers.groq.url must be a string`. Unknown keys only warn (typos such as
// `api-key` are the common mistake, but extra keys are not worth refusing to start over).
//
// Deliberately lenient: disable_parallel_tool_calls accepts true as well as
// a nonzero number; show_thinking/expand_output accept booleans as well as "true"/"false"; an
// empty table is accepted wherever a list is expected (Lua cannot tell {} from an empty list).

import { readRegularFileSync } from '../host/regular-file.js';
import type { ProviderKind } from '../core/types.js';
import { SANDBOX_MODES } from '../sandbox/policy.js';
import { ConfigError } from './errors.js';
import { childPath } from './key-path.js';
import { modelSpecProblem } from './model-spec.js';
import type {
  CheckpointsConfig,
  ConfigValues,
  ModelSettings,
  PermissionSettings,
  Price,
  ProviderSettings,
  ReasoningSetting,
  UiMode,
} from './types.js';

export const PROVIDER_KINDS: readonly ProviderKind[] = ['openai', 'anthropic', 'ollama', 'openai-responses'];

const TOP_KEYS = new Set([
  'agent',
  'agents',
  'model',
  'providers',
  'system_prompt',
  'tools',
  'volatile_tools',
  'mcp_servers',
  'show_thinking',
  'expand_output',
  'mcp_ready_timeout_ms',
  'max_iterations',
  'reasoning_effort',
  'ui',
  'probe_timeout_ms',
  'first_byte_timeout_ms',
  'stream_idle_timeout_ms',
  'body_timeout_ms',
  'max_reply_bytes',
  'max_parallel_tools',
  'sandbox',
  'sandbox_writable',
  'sandbox_network',
  'sandbox_unreadable',
  'agents_md',
  'agents_md_max_bytes',
  'permissions',
  'checkpoints',
  'repair',
]);
const CHECKPOINT_KEYS = new Set(['enabled', 'gitignore', 'max_file_mb', 'max_files', 'keep', 'max_mb', 'git_timeout_ms']);
const PROVIDER_KEYS = new Set([
  'kind',
  'url',
  'api_key',
  'rate_tokens_per_sec',
  'rate_burst',
  'disable_parallel_tool_calls',
  'max_tokens',
  'models',
  'price',
]);
const MODEL_KEYS = new Set(['context_size', 'autocompact_pct', 'system_prompt', 'reasoning_effort', 'price']);
const PRICE_KEYS = new Set(['input', 'output', 'cached_input']);
const PERMISSION_KEYS = new Set(['allow', 'ask', 'deny', 'unattended', 'read_only_commands']);

export const UI_MODES: readonly UiMode[] = ['fullscreen', 'inline'];

export const REASONING_SETTINGS: readonly ReasoningSetting[] = ['low', 'medium', 'high', 'off'];

export type Table = Record<string, unknown>;

const LIMIT_KEYS = [
  ['probe_timeout_ms', 'probeTimeoutMs'],
  ['first_byte_timeout_ms', 'firstByteTimeoutMs'],
  ['stream_idle_timeout_ms', 'streamIdleTimeoutMs'],
  ['body_timeout_ms', 'bodyTimeoutMs'],
  ['max_reply_bytes', 'maxReplyBytes'],
  ['max_parallel_tools', 'maxParallelTools'],
] as const;

export const isTable = (v: unknown): v is Table => typeof v === 'object' && v !== null && !Array.isArray(v);
export const own = (t: object, k: string): boolean => Object.hasOwn(t, k);
const isEmptyTable = (v: unknown) => isTable(v) && Object.keys(v).length === 0;

/** Set a key without "__proto__" turning into a prototype change. */
export function setKey<T>(obj: Record<string, T>, k: string, v: T): void {
  Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
}

export interface ValidateContext {
  /** File name used in messages: config.lua, agents/coder.lua. */
  label: string;
  /** Absolute path of that file. */
  file?: string;
  /** Key path of the table being checked ('' for a file's own table, agents.coder for an inline profile). */
  prefix: string;
  /** Collects unknown-key warnings; omitted ⇒ unknown keys are not reported. */
  warnings?: string[];
}

function fail(ctx: ValidateContext, path: string, problem: string): never {
  const line = ctx.file ? lineOfKey(ctx.file, path) : undefined;
  const where = line ? `${ctx.label}:${line}` : ctx.label;
  throw new ConfigError(`${where}: ${path} ${problem}`, { file: ctx.file, line, keyPath: path });
}

/**
 * Where `a.b.c` is assigned in a config file: each segment's `name =` (or `["name"] =`) searched
 * after the previous one. Lua values carry no source positions, so this reads the text; a key
 * built by code is simply not found (no line then).
 */
export function lineOfKey(file: string, path: string): number | undefined {
  let src: string;
  try {
    src = readRegularFileSync(file, 4 * 1024 * 1024).toString('utf8');
  } catch {
    return undefined;
  }
  let pos = 0;
  for (const raw of path.split('.')) {
    const seg = raw.replace(/^\[?["']?|["']?\]?$/g, '');
    if (!seg) return undefined;
    const esc = seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const re = new RegExp(`(?:^|[^\\w])(?:${esc}|\\[\\s*["']${esc}["']\\s*\\])\\s*=(?!=)`, 'g');
    re.lastIndex = pos;
    const m = re.exec(src);
    if (!m) return undefined;
    pos = m.index + m[0].length;
  }
  return src.slice(0, pos).split('\n').length;
}

function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return 'a list';
  if (isTable(v)) return 'a table';
  return String(v);
}

function str(ctx: ValidateContext, v: unknown, path: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') fail(ctx, path, `must be a string (got ${show(v)})`);
  return v;
}

function num(
  ctx: ValidateContext,
  v: unknown,
  path: string,
  o: { min?: number; max?: number; integer?: boolean } = {},
): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(ctx, path, `must be a number (got ${show(v)})`);
  if (o.integer && !Number.isInteger(v)) fail(ctx, path, `must be a whole number (got ${v})`);
  if (o.min !== undefined && v < o.min) fail(ctx, path, `must be at least ${o.min} (got ${v})`);
  if (o.max !== undefined && v > o.max) fail(ctx, path, `must be at most ${o.max} (got ${v})`);
  return v;
}

/** true/false, or the strings "true"/"false". */
function flag(ctx: ValidateContext, v: unknown, path: string): boolean | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  fail(ctx, path, `must be true or false (got ${show(v)})`);
}

function effort(ctx: ValidateContext, v: unknown, path: string): ReasoningSetting | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !(REASONING_SETTINGS as readonly string[]).includes(v)) {
    fail(ctx, path, `must be one of ${REASONING_SETTINGS.map((e) => `"${e}"`).join(', ')} (got ${show(v)})`);
  }
  return v as ReasoningSetting;
}

function table(ctx: ValidateContext, v: unknown, path: string, what = 'a table'): Table | undefined {
  if (v === undefined) return undefined;
  if (!isTable(v)) fail(ctx, path, `must be ${what} (got ${show(v)})`);
  return v;
}

function list(ctx: ValidateContext, v: unknown, path: string, what: string): unknown[] | undefined {
  if (v === undefined) return undefined;
  if (Array.isArray(v)) return v;
  if (isEmptyTable(v)) return [];
  fail(ctx, path, `must be ${what} (got ${show(v)})`);
}

function warnUnknown(ctx: ValidateContext, t: Table, known: Set<string>, path: string): void {
  if (!ctx.warnings) return;
  for (const k of Object.keys(t)) {
    if (!known.has(k)) ctx.warnings.push(`${ctx.label}: unknown key ${childPath(path, k)} (ignored)`);
  }
}

function validUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** `price = { input = 3, output = 15, cached_input = 0.3 }`: US dollars per million tokens. */
function price(ctx: ValidateContext, v: unknown, path: string): Price | undefined {
  const t = table(ctx, v, path, 'a table { input = N, output = N, cached_input = N } (dollars per million tokens)');
  if (!t) return undefined;
  warnUnknown(ctx, t, PRICE_KEYS, path);
  const input = num(ctx, t.input, childPath(path, 'input'), { min: 0 });
  const output = num(ctx, t.output, childPath(path, 'output'), { min: 0 });
  if (input === undefined || output === undefined) fail(ctx, path, 'needs both input and output (dollars per million tokens)');
  const cached = num(ctx, t.cached_input, childPath(path, 'cached_input'), { min: 0 });
  return cached === undefined ? { input, output } : { input, output, cachedInput: cached };
}

function model(ctx: ValidateContext, v: unknown, path: string): ModelSettings {
  const t = table(ctx, v, path)!;
  warnUnknown(ctx, t, MODEL_KEYS, path);
  const out: ModelSettings = {};
  const cs = num(ctx, t.context_size, childPath(path, 'context_size'), { min: 0, integer: true });
  if (cs !== undefined) out.contextSize = cs;
  const pct = t.autocompact_pct;
  // 0 means "the default" in the engine; otherwise it must be a usable percentage.
  if (pct !== 0) {
    const p = num(ctx, pct, childPath(path, 'autocompact_pct'), { min: 1, max: 99 });
    if (p !== undefined) out.autocompactPct = p;
  }
  const sp = str(ctx, t.system_prompt, childPath(path, 'system_prompt'));
  if (sp !== undefined) out.systemPrompt = sp;
  const re = effort(ctx, t.reasoning_effort, childPath(path, 'reasoning_effort'));
  if (re !== undefined) out.reasoningEffort = re;
  const pr = price(ctx, t.price, childPath(path, 'price'));
  if (pr) out.price = pr;
  return out;
}

function provider(ctx: ValidateContext, name: string, v: unknown, path: string): ProviderSettings {
  const t = table(ctx, v, path)!;
  warnUnknown(ctx, t, PROVIDER_KEYS, path);
  const p: ProviderSettings = { name, kind: 'openai', models: {} };
  const kind = str(ctx, t.kind, childPath(path, 'kind'));
  if (kind !== undefined) {
    if (!(PROVIDER_KINDS as readonly string[]).includes(kind)) {
      fail(ctx, childPath(path, 'kind'), `must be one of ${PROVIDER_KINDS.map((k) => `"${k}"`).join(', ')} (got ${show(kind)})`);
    }
    p.kind = kind as ProviderKind;
  }
  const url = str(ctx, t.url, childPath(path, 'url'));
  if (url !== undefined) {
    if (!validUrl(url)) fail(ctx, childPath(path, 'url'), `must be an http:// or https:// URL (got ${show(url)})`);
    p.url = url;
  }
  const key = str(ctx, t.api_key, childPath(path, 'api_key'));
  if (key !== undefined) p.apiKey = key;
  const rate = num(ctx, t.rate_tokens_per_sec, childPath(path, 'rate_tokens_per_sec'), { min: 0 });
  if (rate !== undefined) p.rateTokensPerSec = rate;
  const burst = num(ctx, t.rate_burst, childPath(path, 'rate_burst'), { min: 0 });
  if (burst !== undefined) p.rateBurst = burst;
  const dp = t.disable_parallel_tool_calls;
  if (dp !== undefined) {
    if (typeof dp === 'boolean') p.disableParallelToolCalls = dp;
    else if (typeof dp === 'number' && Number.isFinite(dp)) p.disableParallelToolCalls = dp !== 0;
    else fail(ctx, childPath(path, 'disable_parallel_tool_calls'), `must be true, false or a number (got ${show(dp)})`);
  }
  const mt = num(ctx, t.max_tokens, childPath(path, 'max_tokens'), { min: 1, integer: true });
  if (mt !== undefined) p.maxTokens = mt;
  const pr = price(ctx, t.price, childPath(path, 'price'));
  if (pr) p.price = pr;
  const models = table(ctx, t.models, childPath(path, 'models'), 'a table of model id = { ... }');
  if (models) for (const id of Object.keys(models)) setKey(p.models, id, model(ctx, models[id], childPath(childPath(path, 'models'), id)));
  return p;
}

/** `permissions`: lists of rule strings (their syntax is the permissions module's to check), `unattended` and `read_only_commands`. */
function permissions(ctx: ValidateContext, t: Table, path: string): PermissionSettings {
  warnUnknown(ctx, t, PERMISSION_KEYS, path);
  const out: PermissionSettings = {};
  for (const effect of ['allow', 'ask', 'deny'] as const) {
    const l = list(ctx, t[effect], childPath(path, effect), 'a list of rules such as "shell_exec(npm test *)"');
    if (l) out[effect] = l.map((x, i) => str(ctx, x, childPath(childPath(path, effect), i + 1))!);
  }
  const u = str(ctx, t.unattended, childPath(path, 'unattended'));
  if (u !== undefined) {
    if (u !== 'allow' && u !== 'deny') fail(ctx, childPath(path, 'unattended'), `must be "allow" or "deny" (got ${show(u)})`);
    out.unattended = u;
  }
  const ro = flag(ctx, t.read_only_commands, childPath(path, 'read_only_commands'));
  if (ro !== undefined) out.readOnlyCommands = ro;
  return out;
}

function checkpoints(ctx: ValidateContext, v: unknown, path: string): CheckpointsConfig | undefined {
  const t = table(ctx, v, path);
  if (!t) return undefined;
  warnUnknown(ctx, t, CHECKPOINT_KEYS, path);
  const P = (k: string) => childPath(path, k);
  const out: CheckpointsConfig = {};
  const set = <K extends keyof CheckpointsConfig>(k: K, x: CheckpointsConfig[K] | undefined) => {
    if (x !== undefined) out[k] = x;
  };
  set('enabled', flag(ctx, t.enabled, P('enabled')));
  set('gitignore', flag(ctx, t.gitignore, P('gitignore')));
  const mb = (x: number | undefined) => (x === undefined ? undefined : Math.round(x * 1024 * 1024));
  set('maxFileBytes', mb(num(ctx, t.max_file_mb, P('max_file_mb'), { min: 0 })));
  set('maxFiles', num(ctx, t.max_files, P('max_files'), { min: 1, integer: true }));
  set('keep', num(ctx, t.keep, P('keep'), { min: 1, integer: true }));
  set('maxBytes', mb(num(ctx, t.max_mb, P('max_mb'), { min: 1 })));
  set('gitTimeoutMs', num(ctx, t.git_timeout_ms, P('git_timeout_ms'), { min: 1, integer: true }));
  return out;
}

/** Check one table (a file's returned table or an inline profile) and return its typed settings. */
export function validateValues(raw: Table, ctx: ValidateContext): ConfigValues {
  const P = (k: string) => childPath(ctx.prefix, k);
  warnUnknown(ctx, raw, TOP_KEYS, ctx.prefix);
  const out: ConfigValues = { providers: {}, tools: {}, mcpServers: [], showThinking: false, expandOutput: false };

  const agent = str(ctx, raw.agent, P('agent'));
  if (agent !== undefined) out.agent = agent;
  const m = str(ctx, raw.model, P('model'));
  if (m !== undefined) {
    const problem = modelSpecProblem(m);
    if (problem) fail(ctx, P('model'), `'${m}' ${problem}`);
    out.model = m;
  }
  const providers = table(ctx, raw.providers, P('providers'), 'a table of name = { ... }');
  if (providers)
    for (const name of Object.keys(providers))
      setKey(out.providers, name, provider(ctx, name, providers[name], childPath(P('providers'), name)));

  const agents = table(ctx, raw.agents, P('agents'), 'a table of name = { ... }');
  if (agents) for (const name of Object.keys(agents)) table(ctx, agents[name], childPath(P('agents'), name));

  const sp = str(ctx, raw.system_prompt, P('system_prompt'));
  if (sp !== undefined) out.systemPrompt = sp;

  const tools = table(ctx, raw.tools, P('tools'), 'a table of plugin = { ... }');
  if (tools) for (const name of Object.keys(tools)) setKey(out.tools, name, table(ctx, tools[name], childPath(P('tools'), name))!);

  const vt = list(ctx, raw.volatile_tools, P('volatile_tools'), 'a list of strings');
  if (vt) out.volatileTools = vt.map((x, i) => str(ctx, x, childPath(P('volatile_tools'), i + 1))!);

  const mcp = list(ctx, raw.mcp_servers, P('mcp_servers'), 'a list of server tables');
  if (mcp) out.mcpServers = mcp;

  out.showThinking = flag(ctx, raw.show_thinking, P('show_thinking')) ?? false;
  out.expandOutput = flag(ctx, raw.expand_output, P('expand_output')) ?? false;
  const repair = flag(ctx, raw.repair, P('repair'));
  if (repair !== undefined) out.repair = repair;
  const rt = num(ctx, raw.mcp_ready_timeout_ms, P('mcp_ready_timeout_ms'), { min: 0 });
  if (rt !== undefined) out.mcpReadyTimeoutMs = rt;
  const mi = num(ctx, raw.max_iterations, P('max_iterations'), { min: 0, integer: true });
  if (mi !== undefined) out.maxIterations = mi;
  const re = effort(ctx, raw.reasoning_effort, P('reasoning_effort'));
  if (re !== undefined) out.reasoningEffort = re;
  const ui = str(ctx, raw.ui, P('ui'));
  if (ui !== undefined) {
    if (!(UI_MODES as readonly string[]).includes(ui))
      fail(ctx, P('ui'), `must be one of ${UI_MODES.map((m) => `"${m}"`).join(', ')} (got ${show(ui)})`);
    out.ui = ui as UiMode;
  }
  const sb = str(ctx, raw.sandbox, P('sandbox'));
  if (sb !== undefined) {
    const mode = SANDBOX_MODES.find((m) => m === sb);
    if (!mode) fail(ctx, P('sandbox'), `must be one of ${SANDBOX_MODES.map((m) => `"${m}"`).join(', ')} (got ${show(sb)})`);
    out.sandbox = mode;
  }
  const sw = list(ctx, raw.sandbox_writable, P('sandbox_writable'), 'a list of paths');
  if (sw) out.sandboxWritable = sw.map((x, i) => str(ctx, x, childPath(P('sandbox_writable'), i + 1))!);
  const su = list(ctx, raw.sandbox_unreadable, P('sandbox_unreadable'), 'a list of paths');
  if (su) out.sandboxUnreadable = su.map((x, i) => str(ctx, x, childPath(P('sandbox_unreadable'), i + 1))!);
  const sn = flag(ctx, raw.sandbox_network, P('sandbox_network'));
  if (sn !== undefined) out.sandboxNetwork = sn;
  const am = flag(ctx, raw.agents_md, P('agents_md'));
  if (am !== undefined) out.agentsMd = am;
  const amb = num(ctx, raw.agents_md_max_bytes, P('agents_md_max_bytes'), { min: 1, integer: true });
  if (amb !== undefined) out.agentsMdMaxBytes = amb;
  const perms = table(ctx, raw.permissions, P('permissions'), 'a table { allow = {...}, ask = {...}, deny = {...} }');
  if (perms) out.permissions = permissions(ctx, perms, P('permissions'));
  const cp = checkpoints(ctx, raw.checkpoints, P('checkpoints'));
  if (cp) out.checkpoints = cp;
  // Limits of the connection and the tool batch; 0 means no limit.
  for (const [key, field] of LIMIT_KEYS) {
    const v = num(ctx, raw[key], P(key), { min: 0, integer: true });
    if (v !== undefined) out[field] = v;
  }
  return out;
}
