// Runs the escape corpus as whichever user starts it and prints one JSON line per attempt:
// {"channel","mode","id","escaped","fullPossible","out"}. escapes.test.ts starts it as itself and,
// when that is root, again as nobody (uid 65534). The process plays clm: its environment holds
// the marker (CLM_API_KEY) that /proc/<pid>/environ must not give away.
//
// Channels: `shell` (shell_exec), `mcp` (the same command run by an MCP stdio server opted in to
// the sandbox, started afresh for each attempt), and for the attempts that are a file access
// `builtin` (write_file / read_file) and `plugin` (clm.write_file / clm.read_file in the Lua worker).
// Environment: CLM_CORPUS_SETUID — a setuid binary made for this user ('' for none; unset: make one as root).
// Arguments: modes and case ids to run only those (default: every mode, every case).

import { fileURLToPath } from 'node:url';
import { builtinTools } from '../../src/builtin-tools/index.js';
import { sandboxedShellExec } from '../../src/builtin-tools/shell-exec.js';
import { loadPlugins } from '../../src/lua/index.js';
import { connectMcpServers } from '../../src/mcp/index.js';
import { type SandboxMode, SANDBOX_MODES } from '../../src/sandbox/policy.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { call } from '../builtin-tools/fake-inv.js';
import { CASES, makeRig, PWNED } from './escape-corpus.js';

const marker = process.env.CLM_API_KEY ?? '';
if (!marker) throw new Error('escape-runner: CLM_API_KEY (the marker) is not set');
const setuidEnv = process.env.CLM_CORPUS_SETUID;
const setuid = setuidEnv === undefined ? undefined : setuidEnv || null;
const FILES_PLUGIN = fileURLToPath(new URL('../fixtures/lua-sandbox-files', import.meta.url));
const SHELL_SERVER = fileURLToPath(new URL('../fixtures/mcp/shell-server.mjs', import.meta.url));
const CHANNELS = ['shell', 'mcp', 'builtin', 'plugin'] as const;

/** The attempt's command run by an MCP server in `sb`'s sandbox. */
async function byMcpServer(sb: Sandbox, command: string, cwd: string): Promise<string> {
  const m = connectMcpServers([{ name: 'corpus', command: [process.execPath, SHELL_SERVER], sandbox: true }], {
    confine: (r) => sb.confineServer(r),
  });
  try {
    const ready = await m.waitReady(60_000);
    if (!ready.ready.includes('corpus')) throw new Error(`the MCP server did not start: ${JSON.stringify(ready.failed)}`);
    const tool = m.tools().find((t) => t.name === 'mcp__corpus__sh')!;
    return (await call(tool, { command, cwd }, { timeoutMs: 30_000 }).result).text;
  } finally {
    await m.close();
  }
}

const only = process.argv.slice(2).filter((a) => !SANDBOX_MODES.some((m) => m === a));
const modes = SANDBOX_MODES.filter((m) => process.argv.includes(m));
for (const mode of (modes.length ? modes : SANDBOX_MODES) as readonly SandboxMode[]) {
  // One rig and one plugin host per mode; the trees are made afresh before every attempt (at the
  // same paths, so the policy stays true), so one that got through cannot make the next look successful.
  const rig = await makeRig({ setuid, envMarker: marker });
  process.chdir(rig.t.ws);
  const sb = new Sandbox({ settings: { mode, writable: [rig.t.home] }, cwd: rig.t.ws, env: rig.t.env });
  const host = await loadPlugins({ dirs: [FILES_PLUGIN], sandbox: sb.files?.policy });
  const files = builtinTools({ sandbox: sb });
  try {
    for (const c of CASES) {
      if (only.length && !only.includes(c.id)) continue;
      for (const channel of CHANNELS) {
        rig.reset();
        process.chdir(rig.t.ws); // made afresh: the old directory is gone
        const a = c.attempt(rig);
        let text: string;
        let full = c.fullPossible ? c.fullPossible(rig) : true;
        if (channel === 'shell') text = (await call(sandboxedShellExec(sb), { command: a.shell }, { timeoutMs: 20_000 }).result).text;
        else if (channel === 'mcp') text = await byMcpServer(sb, a.shell, rig.t.ws);
        else if (!a.file) continue;
        else {
          a.file.prepare?.();
          full &&= a.file.fullPossible ?? true;
          const args = a.file.op === 'write' ? { path: a.file.path, content: PWNED } : { path: a.file.path };
          const tool =
            channel === 'builtin'
              ? files.find((t) => t.name === `${a.file!.op}_file`)!
              : host.tools.find((t) => t.name === `plugin_${a.file!.op}`)!;
          text = (await call(tool, args).result).text;
        }
        process.stdout.write(
          `${JSON.stringify({ channel, mode, id: c.id, escaped: c.escaped(rig, text), fullPossible: full, out: text.slice(0, 600) })}\n`,
        );
      }
    }
  } finally {
    await host.close();
    rig.close();
  }
}
process.exit(0);
