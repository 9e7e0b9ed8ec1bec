// A resolved run (flags, environment, config.lua) as the agent's configuration.

import { repairToolCalls } from '../core/providers/tool-call-repair.js';
import type { AgentConfig } from '../core/agent-config.js';
import type { ToolDef } from '../core/types.js';
import { BUILTIN_TOOLS_SYSTEM_PROMPT } from '../builtin-tools/index.js';
import type { ResolvedRun } from './resolve-run.js';

/** The run's system prompt before the project instructions: config.lua's, else the builtin tools' own. */
export function baseSystemPrompt(run: ResolvedRun): string {
  return run.systemPrompt ?? BUILTIN_TOOLS_SYSTEM_PROMPT;
}

export function agentConfig(
  run: ResolvedRun,
  o: { stream: boolean; builtinTools: ToolDef[]; autocompactAtTurnEnd?: boolean; systemPrompt?: string },
): AgentConfig {
  return {
    baseUrl: run.baseUrl,
    apiKey: run.apiKey,
    provider: run.provider,
    model: run.model,
    systemPrompt: o.systemPrompt ?? baseSystemPrompt(run),
    stream: o.stream,
    contextSize: run.contextSize,
    autocompactPct: run.autocompactPct,
    rateTokensPerSec: run.rateTokensPerSec,
    rateBurst: run.rateBurst,
    volatileTools: run.volatileTools,
    disableParallelToolCalls: run.disableParallelToolCalls,
    maxTokens: run.maxTokens,
    reasoningEffort: run.reasoningEffort,
    maxIterations: run.maxIterations,
    ...definedOnly(run.limits),
    providerName: run.providerName,
    builtinTools: o.builtinTools,
    autocompactAtTurnEnd: o.autocompactAtTurnEnd,
    ...(run.repair ? { repairToolCalls } : {}),
  };
}

/** The limits config.lua sets; one it leaves out keeps the library default. */
function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
