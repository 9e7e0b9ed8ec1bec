// A resolved run (flags, environment, config.lua) as the agent's configuration.

import type { AgentConfig, ToolDef } from '../core/types.js';
import type { ResolvedRun } from './resolve.js';

export function agentConfig(run: ResolvedRun, o: { stream: boolean; builtinTools: ToolDef[] }): AgentConfig {
  return {
    baseUrl: run.baseUrl,
    apiKey: run.apiKey,
    provider: run.provider,
    model: run.model,
    systemPrompt: run.systemPrompt,
    stream: o.stream,
    contextSize: run.contextSize,
    autocompactPct: run.autocompactPct,
    rateTokensPerSec: run.rateTokensPerSec,
    rateBurst: run.rateBurst,
    volatileTools: run.volatileTools,
    disableParallelToolCalls: run.disableParallelToolCalls,
    maxTokens: run.maxTokens,
    providerName: run.providerName,
    builtinTools: o.builtinTools,
  };
}
