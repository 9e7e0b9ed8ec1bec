// `mcp_servers` entries from config.lua, checked once. Bad entries are skipped with the C
// program's messages; everything after this works on McpServerSpec only.

export interface McpServerConfig {
  name?: string;
  /** Default "stdio". */
  transport?: 'stdio' | 'http';
  /** stdio: argv, spawned without a shell. */
  command?: string[];
  /** http: the streamable HTTP endpoint. */
  url?: string;
  /** http: sent as `Authorization: Bearer <api_key>`. */
  api_key?: string;
  /** Per-request deadline (initialize, tools/list, each tools/call); default 30 000. */
  timeout_ms?: number;
  /** stdio: run the server in clm's sandbox. */
  sandbox?: boolean;
}

export interface McpServerSpec {
  name: string;
  transport: 'stdio' | 'http';
  /** stdio only; non-empty. */
  command: string[];
  /** http only. */
  url?: string;
  apiKey?: string;
  timeoutMs: number;
  /** stdio only: the server runs in clm's sandbox. */
  sandbox?: boolean;
}

export const DEFAULT_MCP_TIMEOUT_MS = 30_000;

export interface ParsedMcpConfig {
  servers: McpServerSpec[];
  /** One message per skipped entry or ignored field, e.g. "mcp: skipping server with no 'name'". */
  errors: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Validate the configured list (an array, or a Lua-style table converted to an object). */
export function parseMcpServers(list: unknown): ParsedMcpConfig {
  const servers: McpServerSpec[] = [];
  const errors: string[] = [];
  if (list === undefined || list === null) return { servers, errors };
  const entries = Array.isArray(list) ? list : isObject(list) ? Object.values(list) : null;
  if (!entries) return { servers, errors: ["mcp: 'mcp_servers' must be a list of server tables"] };
  const seen = new Set<string>();
  for (const e of entries) {
    if (!isObject(e) || typeof e.name !== 'string' || e.name === '') {
      errors.push("mcp: skipping server with no 'name'");
      continue;
    }
    const name = e.name;
    if (seen.has(name)) {
      errors.push(`mcp: ${name}: duplicate server name; skipped`);
      continue;
    }
    const transport = e.transport ?? 'stdio';
    if (transport !== 'stdio' && transport !== 'http') {
      errors.push(`mcp: ${name}: unknown transport ${JSON.stringify(transport)} (use "stdio" or "http")`);
      continue;
    }
    let timeoutMs = DEFAULT_MCP_TIMEOUT_MS;
    if (e.timeout_ms !== undefined) {
      if (typeof e.timeout_ms === 'number' && Number.isFinite(e.timeout_ms) && e.timeout_ms > 0) timeoutMs = Math.floor(e.timeout_ms);
      else errors.push(`mcp: ${name}: 'timeout_ms' must be a positive number; using ${DEFAULT_MCP_TIMEOUT_MS}`);
    }
    if (transport === 'http') {
      if (typeof e.url !== 'string' || e.url === '') {
        errors.push(`mcp: ${name}: http transport needs 'url'`);
        continue;
      }
      let url: URL;
      try {
        url = new URL(e.url);
      } catch {
        errors.push(`mcp: ${name}: invalid 'url' ${JSON.stringify(e.url)}`);
        continue;
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        errors.push(`mcp: ${name}: 'url' must be http:// or https://`);
        continue;
      }
      if (e.sandbox === true) errors.push(`mcp: ${name}: 'sandbox' applies to stdio servers only; ignored`);
      const spec: McpServerSpec = { name, transport, command: [], url: e.url, timeoutMs };
      if (typeof e.api_key === 'string' && e.api_key !== '') spec.apiKey = e.api_key;
      servers.push(spec);
    } else {
      const cmd = e.command;
      if (!Array.isArray(cmd) || cmd.length === 0 || !cmd.every((a) => typeof a === 'string') || cmd[0] === '') {
        errors.push(`mcp: ${name}: stdio transport needs a non-empty 'command' array`);
        continue;
      }
      if (e.sandbox !== undefined && typeof e.sandbox !== 'boolean') {
        // Not confining a server that asked for it would be silent: it is not started instead.
        errors.push(`mcp: ${name}: 'sandbox' must be true or false; skipped`);
        continue;
      }
      servers.push({ name, transport, command: cmd as string[], timeoutMs, ...(e.sandbox ? { sandbox: true } : {}) });
    }
    seen.add(name);
  }
  return { servers, errors };
}
