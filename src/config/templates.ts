// The starter files `clm setup` writes: the common providers with their kinds and URLs, and in
// secrets.lua a slot for every provider that reads one.

/** [name, kind, url, where to get a key] — the order they appear in config.lua. */
export const TEMPLATE_PROVIDERS: readonly (readonly [string, string, string, string])[] = [
  ['anthropic', 'anthropic', 'https://api.anthropic.com/v1', 'paid key: https://console.anthropic.com/settings/keys'],
  ['openai', 'openai-responses', 'https://api.openai.com/v1', 'paid key: https://platform.openai.com/api-keys'],
  ['groq', 'openai', 'https://api.groq.com/openai/v1', 'free key: https://console.groq.com/keys'],
  ['cerebras', 'openai', 'https://api.cerebras.ai/v1', 'free key: https://cloud.cerebras.ai/'],
  ['nvidia', 'openai', 'https://integrate.api.nvidia.com/v1', 'free key: https://build.nvidia.com/ (NVIDIA Developer Program)'],
  ['openrouter', 'openai', 'https://openrouter.ai/api/v1', 'key: https://openrouter.ai/keys (only ":free" model ids cost nothing)'],
  ['github', 'openai', 'https://models.github.ai/inference', 'a GitHub personal access token: https://github.com/settings/tokens'],
  ['ollama_cloud', 'openai', 'https://ollama.com/v1', 'free key: https://ollama.com/settings/keys'],
  ['llm7', 'openai', 'https://api.llm7.io/v1', 'free token: https://token.llm7.io'],
  ['google', 'openai', 'https://generativelanguage.googleapis.com/v1beta/openai', 'free key: https://aistudio.google.com/app/apikey'],
];

function providerBlock([name, kind, url, key]: readonly [string, string, string, string]): string {
  return [
    `    ${name} = { -- ${key}`,
    `      kind = "${kind}",`,
    `      url = "${url}",`,
    `      api_key = clm.secrets.${name},`,
    '    },',
  ].join('\n');
}

export const CONFIG_TEMPLATE = `-- clm configuration (see clm-config(5)). This file is Lua and must return a table.
--
-- Keys live in secrets.lua (next to this file) and arrive here as clm.secrets.<name>, so this
-- file can be shared or checked in. A provider without a key does nothing until you pick it
-- with \`model\` below or with -m provider/model-id; delete the ones you do not use.
return {
  -- Default agent profile: an inline entry of an \`agents\` table here, or agents/<name>.lua.
  -- agent = "default",

  -- Default model as "provider/model-id": the providers[] entry, then the wire model id
  -- (split at the first '/'). A bare id without '/' is sent as is to the active connection.
  -- Free tiers are small: a tool-using agent can hit their tokens-per-minute limits quickly.
  -- model = "anthropic/claude-sonnet-4-5",
  -- model = "groq/llama-3.3-70b-versatile",

  providers = {
${TEMPLATE_PROVIDERS.map(providerBlock).join('\n')}

    -- A local llama.cpp / Ollama / vLLM server (usually no key). "local" is a Lua keyword,
    -- so it needs the ["local"] form. Per-model settings go under models, keyed by model id.
    -- ["local"] = {
    --   kind = "ollama",
    --   url = "http://127.0.0.1:8081/v1",
    --   models = {
    --     ["qwen3-32b"] = { context_size = 32768, autocompact_pct = 70 },
    --   },
    -- },
  },

  -- system_prompt = "You are a helpful assistant.",

  -- Per-plugin settings: each plugin sees its own table as clm.config.
  tools = {
    -- web_search = { api_key = clm.secrets.tavily },
  },
}
`;

export const SECRETS_TEMPLATE = `-- clm secrets, kept apart from config.lua so that file can be shared without leaking keys.
-- config.lua and agent profiles see this table as clm.secrets. Fill in the keys you use and
-- delete the rest. Keep this file private (chmod 600): clm notes in its debug log
-- (CLM_DEBUG_LOG) when group or other can read it.
return {
${TEMPLATE_PROVIDERS.map(([name]) => `  ${name} = "",`).join('\n')}
  -- ["local"] = "...", -- a local server usually needs no key
  -- tavily = "tvly-...", -- web_search plugin
}
`;
