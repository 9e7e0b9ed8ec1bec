// The MCP SDK is imported on first connect, not at module load: a bundler (the CLI's esbuild
// build) hoists static imports of external packages to the top of the bundle even when this
// module itself is only reached through a lazy import(), which would load the SDK on every start.

export const loadClientSdk = () => import('@modelcontextprotocol/client');
