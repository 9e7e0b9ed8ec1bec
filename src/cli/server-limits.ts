// What a local server says of the model it serves: the context size it runs it with (for the
// compaction threshold and the gauge) and whether the model's chat template takes tools. Each
// server says it in its own place; each figure comes back with where it came from, for the
// debug log.
//
// - llama.cpp: /props (router mode: /props?model=ID) `default_generation_settings.n_ctx`, over
//   `total_slots` (each slot has its share); else /v1/models `data[].meta.n_ctx`, else the
//   model's training context `meta.n_ctx_train`. Tools: /props `chat_template_caps.supports_tools`.
// - Ollama: /api/ps `context_length` of the loaded model; else /api/show's `num_ctx` parameter,
//   else the model's `<arch>.context_length`. Tools: /api/show `capabilities`.
// - LM Studio: /api/v0/models `loaded_context_length`, else `max_context_length`. Tools: its
//   `capabilities`.
// - vLLM: /v1/models `max_model_len`.

import type { Probes } from '../core/probes.js';
import type { Cancelable, Host } from '../core/host.js';
import { duration } from '../core/duration.js';
import type { LocalServer } from './local-server.js';

export interface ServerLimits {
  /** Tokens of context the server runs the model with, when it says. */
  contextSize?: number;
  /** Where contextSize came from (`/props default_generation_settings.n_ctx`). */
  contextFrom?: string;
  /** Whether the model's template takes tools, when the server says. */
  tools?: boolean;
  toolsFrom?: string;
}

/** A field of parsed JSON (undefined unless `v` is an object that has it). */
export const field = (v: unknown, key: string): unknown =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>)[key] : undefined;
/** The elements of a JSON array (none for anything else). */
export const items = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** The entry of a model list (`data`, `models`) whose `key` is `id`. */
export const entryOf = (list: unknown, id: string, key = 'id'): unknown => items(list).find((e) => field(e, key) === id);

const positive = (v: unknown): number | undefined => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
};

/** The first of `figures` that is a positive whole number, with where it came from. */
function firstSaid(figures: [value: unknown, from: string][]): ServerLimits {
  for (const [v, from] of figures) {
    const n = positive(v);
    if (n) return { contextSize: n, contextFrom: from };
  }
  return {};
}

/** Whether the model takes tools, when `caps` is the server's list of capabilities. */
function toolsSaid(caps: unknown, name: string, from: string): ServerLimits {
  return Array.isArray(caps) ? { tools: caps.includes(name), toolsFrom: from } : {};
}

export function learnLimits(probes: Probes, host: Host, server: LocalServer, model: string, timeoutMs: number): Promise<ServerLimits> {
  const entry = entryOf(field(server.list, 'data'), model);
  switch (server.kind) {
    case 'llama.cpp':
      return llamaCppLimits(probes, server, model, field(entry, 'meta'));
    case 'Ollama':
      return ollamaLimits(probes, host, server, model, timeoutMs);
    case 'LM Studio':
      return lmStudioLimits(probes, server, model);
    case 'vLLM':
      return Promise.resolve(firstSaid([[field(entry, 'max_model_len'), '/v1/models max_model_len']]));
  }
}

async function llamaCppLimits(probes: Probes, server: LocalServer, model: string, meta: unknown): Promise<ServerLimits> {
  const router = server.models.length > 1;
  const query = router ? `?model=${encodeURIComponent(model)}` : '';
  let props = await getJson(probes, `${server.origin}/props${query}`);
  if (props === undefined && router) props = await getJson(probes, `${server.origin}/v1/props${query}`);
  const nCtx = positive(field(field(props, 'default_generation_settings'), 'n_ctx'));
  const slots = positive(field(props, 'total_slots')) ?? 1;
  const out = firstSaid([
    [nCtx && Math.floor(nCtx / slots), `/props default_generation_settings.n_ctx ${nCtx}${slots > 1 ? ` over ${slots} slots` : ''}`],
    [field(meta, 'n_ctx'), '/v1/models meta.n_ctx'],
    [field(meta, 'n_ctx_train'), "/v1/models meta.n_ctx_train (the model's own; the server's may be smaller)"],
  ]);
  const tools = field(field(props, 'chat_template_caps'), 'supports_tools');
  return typeof tools === 'boolean' ? { ...out, tools, toolsFrom: '/props chat_template_caps.supports_tools' } : out;
}

async function ollamaLimits(probes: Probes, host: Host, server: LocalServer, model: string, timeoutMs: number): Promise<ServerLimits> {
  const [ps, show] = await Promise.all([
    getJson(probes, `${server.origin}/api/ps`),
    postJson(host, `${server.origin}/api/show`, { model }, timeoutMs),
  ]);
  const running = entryOf(field(ps, 'models'), model, 'name') ?? entryOf(field(ps, 'models'), model, 'model');
  const parameters = field(show, 'parameters');
  const numCtx = /(?:^|\n)\s*num_ctx\s+(\d+)/.exec(typeof parameters === 'string' ? parameters : '')?.[1];
  const info = field(show, 'model_info');
  const key = Object.keys(typeof info === 'object' && info !== null ? info : {}).find((k) => k.endsWith('.context_length')) ?? '';
  return {
    ...firstSaid([
      [field(running, 'context_length'), '/api/ps context_length (loaded)'],
      [numCtx, '/api/show parameters num_ctx'],
      [field(info, key), `/api/show model_info.${key}`],
    ]),
    ...toolsSaid(field(show, 'capabilities'), 'tools', '/api/show capabilities'),
  };
}

async function lmStudioLimits(probes: Probes, server: LocalServer, model: string): Promise<ServerLimits> {
  const m = entryOf(field(await getJson(probes, `${server.origin}/api/v0/models`), 'data'), model);
  return {
    ...firstSaid([
      [field(m, 'loaded_context_length'), '/api/v0/models loaded_context_length'],
      [field(m, 'max_context_length'), '/api/v0/models max_context_length (not loaded yet)'],
    ]),
    ...toolsSaid(field(m, 'capabilities'), 'tool_use', '/api/v0/models capabilities'),
  };
}

/** The log lines that say what was learned, and from where. */
export function limitsLog(server: LocalServer, model: string, l: ServerLimits): string[] {
  const at = `${server.kind} ${model}`;
  return [
    l.contextSize
      ? `[local] ${at}: context ${l.contextSize} tokens, from ${l.contextFrom}`
      : `[local] ${at}: the server does not say its context size`,
    l.tools === undefined
      ? `[local] ${at}: the server does not say whether the template takes tools`
      : `[local] ${at}: the template ${l.tools ? 'takes' : 'does not take'} tools, from ${l.toolsFrom}`,
  ];
}

/** A GET's JSON body when it answered 200 with JSON; undefined otherwise. */
export async function getJson(probes: Probes, url: string): Promise<unknown> {
  const r = await probes.get(url, { baseUrl: url });
  if (r.status !== 200) return undefined;
  try {
    return JSON.parse(r.body ?? '');
  } catch {
    return undefined;
  }
}

/** POST JSON, bounded like the probes' GETs; the answer's JSON, or undefined. */
function postJson(host: Host, url: string, body: unknown, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve) => {
    let done = false;
    let timer: Cancelable | null = null;
    const finish = (v: unknown) => {
      if (done) return;
      done = true;
      timer?.cancel();
      resolve(v);
    };
    const req = host.http(
      { url, body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, maxBytes: 8 * 1024 * 1024 },
      {
        onResponse: (res) => {
          try {
            finish(res.status === 200 ? JSON.parse(new TextDecoder().decode(res.body)) : undefined);
          } catch {
            finish(undefined);
          }
        },
        onError: (e) => {
          host.log?.(`[local] ${url}: ${e.message}`);
          finish(undefined);
        },
      },
    );
    if (!done)
      timer =
        host.setTimer?.(timeoutMs, () => {
          host.log?.(`[local] ${url}: no answer within ${duration(timeoutMs)}`);
          finish(undefined);
          req.cancel();
        }) ?? null;
  });
}
