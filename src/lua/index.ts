// The Lua plugin runtime (clm-tool(5)). Import lazily: nothing starts until loadPlugins().

export { loadPlugins, type LoadOptions, type PluginHost, type LoadError } from './worker-supervisor.js';
export { seedPluginDir, packageRoot } from './paths.js';
