// `clm mcp login NAME` and `clm mcp logout NAME`: the OAuth login of an HTTP MCP server of
// config.lua (the profile of -a), kept in clm's state directory for every later run.

import { forTerminal } from '../core/terminal-text.js';
import { clmDir } from '../host/xdg-dirs.js';
import type { CliArgs } from './args.js';
import type { Out } from './render.js';
import { ConfigProblem, resolveRun } from './resolve-run.js';

export async function runMcpCommand(args: CliArgs, env: NodeJS.ProcessEnv, stdout: Out, stderr: Out): Promise<number> {
  const { action, server } = args.mcp!;
  const run = await resolveRun(args, env);
  const [{ parseMcpServers }, oauth, { openBrowser }] = await Promise.all([
    import('../mcp/config.js'),
    import('../mcp/mcp-oauth.js'),
    import('../mcp/open-browser.js'),
  ]);
  const { servers } = parseMcpServers(run.mcpServers);
  const spec = servers.find((s) => s.name === server);
  if (!spec) {
    const known = servers.map((s) => s.name);
    throw new ConfigProblem(`no MCP server '${server}' in mcp_servers${known.length ? ` (configured: ${known.join(', ')})` : ''}`);
  }
  if (spec.transport !== 'http') throw new ConfigProblem(`mcp: ${server}: a stdio server has no login (only http servers do)`);
  const { dir, problem } = clmDir('state', env);
  if (!dir) {
    stderr.write(
      `clm: mcp: ${forTerminal(server)}: no state directory to keep the login in (${problem ?? 'neither XDG_STATE_HOME nor HOME is set'})\n`,
    );
    return 1;
  }
  const say = (text: string) => stdout.write(`${forTerminal(text)}\n`);
  try {
    if (action === 'logout') {
      say(await oauth.logout(spec, { stateDir: dir }));
      return 0;
    }
    await oauth.login(spec, { stateDir: dir, open: (url) => openBrowser(url, env), say });
    say(`mcp: ${server}: logged in`);
    return 0;
  } catch (e) {
    stderr.write(`clm: mcp: ${forTerminal(server)}: ${action} failed: ${forTerminal((e as Error).message ?? String(e))}\n`);
    return 1;
  }
}
