// The local LLM servers on this machine, for a run that names none (no -u, no configured
// provider) and for `clm models`: llama.cpp (8080, 8081), Ollama (11434), LM Studio (1234) and
// vLLM (8000) by default, or the places CLM_LOCAL_SERVERS lists. Every place is asked at once for
// its OpenAI-compatible model list, each GET bounded in time and size, so a silent port costs at
// most the bound and a closed one nothing; the first place in the list's order that answers with
// a model list is the one used.

import { Probes } from '../core/probes.js';
import { DIALECTS } from '../core/providers/index.js';
import type { Host } from '../core/host.js';
import { entryOf, field, getJson, items, learnLimits, limitsLog, type ServerLimits } from './server-limits.js';
import type { LocalServer, Place, ServerKind } from './local-server.js';

/** How long one place has to answer before it counts as no server. */
export const FIND_TIMEOUT_MS = 1500;

export const DEFAULT_PLACES: readonly Place[] = [
  { kind: 'llama.cpp', origin: 'http://127.0.0.1:8080' },
  { kind: 'llama.cpp', origin: 'http://127.0.0.1:8081' },
  { kind: 'Ollama', origin: 'http://127.0.0.1:11434' },
  { kind: 'LM Studio', origin: 'http://127.0.0.1:1234' },
  { kind: 'vLLM', origin: 'http://127.0.0.1:8000' },
];

const KINDS: Record<string, ServerKind> = {
  'llama.cpp': 'llama.cpp',
  llamacpp: 'llama.cpp',
  ollama: 'Ollama',
  lmstudio: 'LM Studio',
  vllm: 'vLLM',
};

/**
 * CLM_LOCAL_SERVERS: `KIND=HOST:PORT` entries separated by commas or blanks (KIND: llamacpp,
 * ollama, lmstudio, vllm); empty means look nowhere. Unset: the default places. A bad entry
 * throws with what is wrong.
 */
export function placesFrom(value: string | undefined): Place[] {
  if (value === undefined) return [...DEFAULT_PLACES];
  const out: Place[] = [];
  for (const entry of value.split(/[\s,]+/).filter(Boolean)) {
    const m = /^([\w.]+)=((?:https?:\/\/)?[^\s/]+)\/?$/.exec(entry);
    const kind = m && KINDS[m[1]!.toLowerCase().replace(/[\s_-]/g, '')];
    if (!m || !kind) throw new Error(`CLM_LOCAL_SERVERS: '${entry}' is not KIND=HOST:PORT (KIND: llamacpp, ollama, lmstudio, vllm)`);
    out.push({ kind, origin: m[2]!.includes('://') ? m[2]! : `http://${m[2]}` });
  }
  return out;
}

/** host:port of an origin, for what clm says. */
export const hostPort = (origin: string) => origin.replace(/^https?:\/\//, '');

/** Where clm looked, grouped by kind: `127.0.0.1:8080, 127.0.0.1:8081 (llama.cpp), 127.0.0.1:11434 (Ollama)`. */
export function placesText(places: readonly Place[]): string {
  const groups = new Map<ServerKind, string[]>();
  for (const p of places) groups.set(p.kind, [...(groups.get(p.kind) ?? []), hostPort(p.origin)]);
  return [...groups].map(([kind, at]) => `${at.join(', ')} (${kind})`).join(', ');
}

/** The server /v1/models describes, when its entries say (`owned_by`); else the place's kind. */
function kindOf(list: unknown, fallback: ServerKind): ServerKind {
  const owner = field(items(field(list, 'data'))[0], 'owned_by');
  if (owner === 'llamacpp') return 'llama.cpp';
  if (owner === 'vllm') return 'vLLM';
  if (owner === 'library' || owner === 'ollama') return 'Ollama';
  if (owner === 'organization_owner') return 'LM Studio';
  return fallback;
}

/** Ask one place for its models (and which are loaded); null when nothing there answers with a model list. */
async function ask(probes: Probes, place: Place, log?: (line: string) => void): Promise<LocalServer | null> {
  const base = `${place.origin}/v1`;
  const r = await probes.get(`${base}/models`, { baseUrl: `${base}/chat/completions` });
  let list: unknown;
  try {
    list = r.status === 200 ? JSON.parse(r.body ?? '') : undefined;
  } catch {
    list = undefined;
  }
  const ids = items(field(list, 'data'))
    .map((e) => field(e, 'id'))
    .filter((id): id is string => typeof id === 'string' && id !== '');
  if (!ids.length) {
    log?.(`[local] ${hostPort(place.origin)}: ${r.error ?? (r.status === 200 ? 'no model list' : `HTTP ${r.status}`)}`);
    return null;
  }
  const kind = kindOf(list, place.kind);
  const loaded = await loadedModels(probes, { ...place, kind }, list, ids);
  const models = ids.map((id) => ({ id, loaded: loaded.has(id) }));
  log?.(`[local] ${kind} at ${hostPort(place.origin)}: ${models.map((m) => m.id + (m.loaded ? ' (loaded)' : '')).join(', ')}`);
  return { ...place, kind, base, models, list };
}

/** Which of `ids` the server has loaded, by its own account. */
async function loadedModels(probes: Probes, place: Place, list: unknown, ids: string[]): Promise<Set<string>> {
  switch (place.kind) {
    case 'Ollama': {
      const ps = await getJson(probes, `${place.origin}/api/ps`);
      const names = items(field(ps, 'models')).flatMap((m) => [field(m, 'name'), field(m, 'model')]);
      return new Set(ids.filter((id) => names.includes(id)));
    }
    case 'LM Studio': {
      const v0 = await getJson(probes, `${place.origin}/api/v0/models`);
      const on = items(field(v0, 'data'))
        .filter((m) => field(m, 'state') === 'loaded')
        .map((m) => field(m, 'id'));
      return new Set(ids.filter((id) => on.includes(id)));
    }
    default: {
      // llama.cpp in router mode says per model; a server of one model (or vLLM's) serves what it lists.
      const status = (id: string) => {
        const e = field(entryOf(field(list, 'data'), id), 'status');
        return typeof e === 'string' ? e : field(e, 'value');
      };
      if (ids.some((id) => status(id) !== undefined)) return new Set(ids.filter((id) => status(id) === 'loaded'));
      return new Set(ids);
    }
  }
}

export interface Finder {
  /** The first place, in the list's order, with a server: known as soon as every place before it has failed. */
  first: Promise<LocalServer | null>;
  /** Every server found, in the list's order. */
  all: Promise<LocalServer[]>;
  probes: Probes;
}

/** Ask every place at once. */
export function findLocalServers(host: Host, places: readonly Place[], timeoutMs = FIND_TIMEOUT_MS): Finder {
  const probes = new Probes(host, DIALECTS, () => timeoutMs);
  const answers = places.map((p) => ask(probes, p, host.log?.bind(host)));
  const first = (async () => {
    for (const a of answers) {
      const s = await a;
      if (s) return s;
    }
    return null;
  })();
  const all = Promise.all(answers).then((xs) => xs.filter((x): x is LocalServer => x !== null));
  return { first, all, probes };
}

/** The model a run uses on `server`: the one it asked for (-m, config.lua), else the loaded one, else the first listed. */
export function chooseModel(server: LocalServer, asked: string | undefined): string {
  return asked || (server.models.find((m) => m.loaded) ?? server.models[0]!).id;
}

export interface Located {
  server: LocalServer;
  model: string;
  limits: ServerLimits;
}

/** The server a run uses, its model and what it says of its limits (in the debug log too); null when there is none. */
export async function locateServer(host: Host, places: readonly Place[], asked: string | undefined): Promise<Located | null> {
  const f = findLocalServers(host, places);
  const server = await f.first;
  if (!server) return null;
  const model = chooseModel(server, asked);
  const limits = await learnLimits(f.probes, host, server, model, FIND_TIMEOUT_MS);
  for (const line of limitsLog(server, model, limits)) host.log?.(line);
  return { server, model, limits };
}

/** What clm says of the server it found. */
export function usingText(l: Located): string {
  const ctx = l.limits.contextSize ? `, context ${l.limits.contextSize} tokens` : '';
  const tools = l.limits.tools === false ? "; the server says the model's template does not take tools" : '';
  return `using ${l.server.kind} at ${hostPort(l.server.origin)}, model ${l.model}${ctx}${tools}`;
}

/** What clm says when it found none. */
export function noneText(places: readonly Place[]): string {
  const where = places.length
    ? `no local server answered at ${placesText(places)}`
    : 'CLM_LOCAL_SERVERS is empty: no local server looked for';
  return `${where}; start one, or point clm at yours with -u URL (or a provider in config.lua: clm setup writes one that lists the common providers)`;
}
