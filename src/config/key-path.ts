// Key paths in messages read like Lua: providers.groq.url, agents["my-agent"], mcp_servers[2].

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** parent + one key; numbers are 1-based list positions. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (IDENT.test(key)) return parent ? `${parent}.${key}` : key;
  return `${parent}[${JSON.stringify(key)}]`;
}
