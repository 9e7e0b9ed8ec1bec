// Public API of src/config: config.lua / secrets.lua / agent profiles, startup resolution and
// `clm setup`. Importing this is cheap: the Lua (wasm) runtime is loaded only when there is a
// config.lua or secrets.lua to evaluate.

export { ConfigError } from './errors.js';
export { configDir, configPaths } from './paths.js';
export type { ConfigPaths } from './paths.js';
export { loadConfig, secretsWithoutConfig, selectAgent, listAgents, listModelSpecs, MAX_CONFIG_BYTES } from './load.js';
export type { LoadConfigOptions } from './load.js';
export { parseModelSpec, modelSpecProblem } from './model-spec.js';
export type { ModelSpec } from './model-spec.js';
export { mergeProfile } from './merge.js';
export { validateValues, PROVIDER_KINDS } from './validate.js';
export { resolveConnection, collectSecrets, secretStrings, DEFAULT_BASE_URL } from './resolve-connection.js';
export type { ConnectionSettings, ConnectionFlags, ConnectionEnv } from './resolve-connection.js';
export { runSetup } from './setup.js';
export type { SetupOptions, SetupResult } from './setup.js';
export { CONFIG_TEMPLATE, SECRETS_TEMPLATE, TEMPLATE_PROVIDERS } from './templates.js';
export type { ClmConfig, ConfigValues, ProviderSettings, ModelSettings, ProviderKind } from './types.js';
