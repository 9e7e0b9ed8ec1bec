// What `/model`, `/provider` and `/agent` change, and what they list. A connection is resolved
// by the start-up rules (Runtime.connectionFor): the URL is built for the provider's dialect,
// CLM_API_KEY (set and non-empty) is the key, --reasoning-effort wins, and a configured model's
// own settings (context size, compaction threshold, reasoning effort) come with it. The history
// stays across every switch, across dialects too.

import { listAgents, listModelSpecs, modelSpecProblem } from '../../config/index.js';
import { maskSecrets } from '../../host/redact.js';
import type { ConnectionSettings } from '../../config/index.js';
import type { Runtime } from '../runtime.js';

/** A switch that did not happen; the message is for the transcript, as an error. */
export class SwitchRefused extends Error {}

export const BUSY = 'busy; try again when idle';

const has = (o: object, k: string) => Object.hasOwn(o, k);

/** Configured provider names, sorted. */
export function providerNames(rt: Runtime): string[] {
  const cfg = rt.run.config;
  return cfg ? Object.keys(cfg.providers).sort() : [];
}

/** Every configured `provider/model-id`, sorted. */
export function modelSpecs(rt: Runtime): string[] {
  const cfg = rt.run.config;
  return cfg ? listModelSpecs(cfg) : [];
}

/** Profile names: inline `agents` entries of config.lua and agents/*.lua, sorted. */
export function agentNames(rt: Runtime): string[] {
  const cfg = rt.run.config;
  return cfg ? listAgents(cfg) : [];
}

/** The current model as a spec: `provider/model-id` on a configured provider, else the bare id. */
export function currentSpec(rt: Runtime): string {
  const p = rt.run.providerName;
  return p ? `${p}/${rt.agent.model}` : rt.agent.model;
}

const reason = (rt: Runtime, e: unknown) => maskSecrets(e instanceof Error ? e.message : String(e), rt.run.secrets);

function connect(rt: Runtime, resolve: () => ConnectionSettings, failure: string): void {
  if (rt.agent.busy) throw new SwitchRefused(BUSY);
  let conn: ConnectionSettings;
  try {
    conn = resolve();
    rt.setConnection(conn);
  } catch (e) {
    throw new SwitchRefused(`${failure}: ${reason(rt, e)}`);
  }
}

/**
 * `/model SPEC`: `provider/model-id` takes that provider's connection and the model's settings;
 * a bare id stays on the current connection (its URL, key and dialect; the provider's limits and,
 * when the provider lists the id under `models`, its settings). Returns the notice.
 */
export function switchModel(rt: Runtime, spec: string): string {
  const problem = modelSpecProblem(spec);
  if (problem) throw new SwitchRefused(`model '${spec}' ${problem}`);
  const cfg = rt.run.config;
  const slash = spec.indexOf('/');
  if (slash > 0) {
    const provider = spec.slice(0, slash);
    if (!cfg || !has(cfg.providers, provider)) throw new SwitchRefused(`provider '${provider}' not found`);
    connect(rt, () => rt.connectionFor({ model: spec }), 'failed to switch model');
    return `[switched to model: ${spec}]`;
  }
  const cur = rt.run;
  connect(rt, () => rt.connectionFor({ model: spec, provider: cur.providerName, url: cur.base }), 'failed to switch model');
  const p = cur.providerName;
  if (p && cfg && has(cfg.providers, p) && has(cfg.providers[p]!.models, spec)) return `[switched to model: ${p}/${spec}]`;
  return `[switched to model: ${spec} (literal, not in config.lua)]`;
}

/** `/provider NAME`: that provider's connection (URL for its dialect, key, limits), the same model id. Returns the notice. */
export function switchProvider(rt: Runtime, name: string): string {
  const cfg = rt.run.config;
  if (!cfg || !has(cfg.providers, name)) throw new SwitchRefused(`provider '${name}' not found`);
  // Spelled as a spec so a model id with slashes of its own (`qwen/qwen3-32b`) stays whole.
  const model = rt.agent.model;
  connect(rt, () => rt.connectionFor({ model: `${name}/${model}` }), 'failed to switch provider');
  return `[switched to provider: ${name}]`;
}

/**
 * `/agent NAME`: a new agent from the profile (its model, connection, system prompt, plugins
 * including agents/NAME/, MCP servers). The conversation goes on: the messages so far are kept,
 * under the new profile's system prompt, in the same session. Returns the notice.
 */
export async function switchAgent(rt: Runtime, name: string): Promise<string> {
  const cfg = rt.run.config;
  if (!cfg) throw new SwitchRefused('no config loaded');
  if (!agentNames(rt).includes(name)) throw new SwitchRefused(`agent '${name}' not found`);
  if (rt.agent.busy) throw new SwitchRefused(BUSY);
  try {
    await rt.switchAgent(name, { keepHistory: true });
  } catch (e) {
    const msg = reason(rt, e);
    throw new SwitchRefused(msg === BUSY ? BUSY : `failed to create agent: ${msg}`);
  }
  return `[switched to agent: ${name}]`;
}
