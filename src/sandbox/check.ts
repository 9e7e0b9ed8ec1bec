// What `clm sandbox check` and the `/sandbox` command say: the machine (bwrap found and its
// version, whether it can make its namespaces, what to change) and the policy in force (mode,
// network, the writable roots, the protected and unreadable paths).

import { statSync } from 'node:fs';
import { bwrapVersion, findBwrap } from './bwrap.js';
import { type NamedPath, ruleName } from './policy.js';
import type { Sandbox } from './sandbox.js';

function list(title: string, items: readonly string[]): string[] {
  return items.length ? [`${title}:`, ...items.map((i) => `  ${i}`)] : [`${title}: none`];
}

/** The policy in force, one fact a line. */
export function policyLines(sb: Sandbox): string[] {
  const p = sb.policy;
  const inForce = sb.inForce;
  const chosen = `${sb.configured}${sb.explicit ? '' : ' (the default)'}`;
  const lines = [
    inForce === 'unavailable'
      ? `mode: unavailable — ${chosen} cannot be had here; ${sb.explicit ? 'shell commands do not run' : 'shell commands run NOT sandboxed'}`
      : `mode: ${chosen} — ${sb.runs()}`,
  ];
  if (inForce === 'unavailable') {
    const a = sb.availability();
    if (!a.ok) lines.push(`  why: ${a.reason}`, `  fix: ${a.fix}`);
  }
  const confining = p.mode !== 'full';
  lines.push(`workspace: ${p.workspace}`);
  if (!confining) {
    lines.push('tools may read and write whatever your user may; the network is open');
    return lines;
  }
  lines.push(
    p.mode === 'read-only'
      ? 'network: off (read-only never has it)'
      : `network: ${p.network ? 'on (sandbox_network = true)' : 'off (sandbox_network = true in config.lua allows it)'}`,
  );
  const tmp = p.mode === 'workspace-write' ? "/tmp (the session's own)" : '/tmp (an empty scratch space per command)';
  lines.push(...list('writable', [...p.writable, tmp]));
  if (p.mode === 'workspace-write')
    lines.push(...list('protected (never writable, even in the writable roots)', p.protected.map(ruleName)));
  lines.push(...list('unreadable (nor writable)', p.unreadable.filter(relevant).map(ruleName)));
  if (inForce === 'unavailable') lines.push("(plugins' file API and the builtin file tools keep this policy: they are checked inside clm)");
  return lines;
}

/** Key files are listed where they exist (or would be inside a writable root); secrets.lua always. */
function relevant(n: NamedPath): boolean {
  return n.what !== 'key file' || existsSafe(n.path);
}

function existsSafe(p: string): boolean {
  try {
    return statSync(p) !== undefined;
  } catch {
    return false;
  }
}

/** The report of `clm sandbox check`, and whether the sandbox works on this machine. */
export function machineReport(sb: Sandbox, env: NodeJS.ProcessEnv = process.env): { lines: string[]; ok: boolean } {
  const lines: string[] = [];
  const backend = sb.backend;
  if (!backend) {
    const a = sb.availability();
    lines.push(`sandbox backend: none for ${process.platform}`);
    if (!a.ok) lines.push(`  fix: ${a.fix}`);
  } else {
    const bin = findBwrap(env);
    lines.push(`bubblewrap: ${bin ? `${bin} (${bwrapVersion(bin) ?? 'version unknown'})` : 'not found on PATH'}`);
    const a = backend.available();
    if (a.ok) lines.push('namespaces: bwrap can create the user, pid and network namespaces it needs');
    else lines.push(`namespaces: ${bin ? 'bwrap cannot run' : 'not checked'}: ${a.reason}`, `  fix: ${a.fix}`);
  }
  if (process.getuid?.() === 0) lines.push('running as root: every capability is dropped inside the sandbox');
  const ok = backend?.available().ok === true;
  lines.push('', ...policyLines(sb));
  lines.push('', ok ? 'the sandbox works here' : 'the sandbox does NOT work here: shell commands cannot be confined (see fix above)');
  return { lines, ok };
}
