// `/tools`, `/mcp`, `/sandbox` and `/permissions`: what the model can call — every tool with where it comes from and how a
// call would be decided — and the MCP servers behind some of them, each with its transport,
// state and tool count; `/mcp reconnect NAME` connects to one again; and how tools run (the
// sandbox's mode and paths, the permission rules and grants, one grant revoked).

import type { CommandContext, CommandFamily, CompletionResult } from './command-context.js';
import { completionOf } from './candidates.js';
import { policyLines } from '../../sandbox/check.js';
import type { ToolRuling } from '../../permissions/engine.js';
import { type Rule, ruleText } from '../../permissions/rule.js';
import { maskSecrets } from '../../host/redact.js';
import type { McpServerView } from '../tool-sources.js';

/** Columns padded to their widest cell, two spaces apart, the last one as it is. */
function columns(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `  ${r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]!) : c)).join('  ')}`.trimEnd());
}

function stateOf(s: McpServerView): string {
  switch (s.state) {
    case 'ready':
      return 'connected';
    case 'connecting':
      return 'connecting';
    case 'down':
      return `down: ${s.error ?? 'server exited'}; restarting`;
    case 'failed':
      return `failed: ${s.error ?? 'unknown error'}`;
    case 'needs-login':
      return s.error ?? `needs login — run clm mcp login ${s.name}`;
    default:
      return 'closed';
  }
}

function mcpText(ctx: CommandContext): string {
  const servers = ctx.runtime.mcpServers();
  if (!servers.length) return 'mcp: no MCP servers (mcp_servers in config.lua)';
  const rows = servers.map((s) => [s.name, s.transport, `${s.tools} tool${s.tools === 1 ? '' : 's'}`, stateOf(s)]);
  return ['mcp servers (/mcp reconnect NAME connects again, /mcp login NAME logs in):', ...columns(rows)].join('\n');
}

/** A rule and where it came from: `read_file(**) in config.lua:3`, `mcp__x, --deny-tools`. */
function ruleFrom(r: Rule): string {
  const file = r.source.kind === 'config' || r.source.kind === 'rules-file';
  return `${ruleText(r)}${file ? ' in ' : ', '}${r.source.label}`;
}

/** At most this many rules named per tool; the rest are counted. */
const SOME_SHOWN = 3;

/**
 * How a call of the tool is decided, as the permission engine decides it:
 * `allow (read_file(**) in config.lua:3)`, `ask (shell_exec: each command is decided by its
 * rules); some calls: allow shell_exec(git status *)`, `ask (default)`.
 */
function decisionText(t: ToolRuling, offered: boolean): string {
  let why: string;
  if (t.rule) why = ruleFrom(t.rule);
  else if (t.shell) why = `${t.tool}: each command is decided by its rules${t.readOnly ? '; those that only read run' : ''}`;
  else why = t.decision === 'allow' ? 'default: the tool has no side effects' : 'default';
  const shown = t.some.slice(0, SOME_SHOWN).map((r) => `${r.effect} ${ruleText(r)}`);
  if (t.some.length > SOME_SHOWN) shown.push(`${t.some.length - SOME_SHOWN} more`);
  return `${t.decision} (${why})${shown.length ? `; some calls: ${shown.join(', ')}` : ''}${offered ? '' : '; not offered'}`;
}

function toolsText(ctx: CommandContext): string {
  const tools = ctx.runtime.toolList();
  const rows = tools.map((t) => [t.name, t.origin, decisionText(t.decision, t.offered)]);
  const offered = tools.filter((t) => t.offered).length;
  return [
    `tools (${offered} offered to the model${offered < tools.length ? `, ${tools.length - offered} not` : ''}):`,
    ...columns(rows),
  ].join('\n');
}

async function reconnect(name: string, ctx: CommandContext): Promise<void> {
  ctx.print(`[mcp: ${name}: reconnecting]`, 'notice');
  try {
    const s = await ctx.runtime.reconnectMcp(name);
    if (s.state === 'ready') ctx.print(`[mcp: ${name}: connected, ${s.tools} tool${s.tools === 1 ? '' : 's'}]`, 'notice');
    else ctx.print(`mcp: ${name}: ${stateOf(s)}`, 'error');
  } catch (e) {
    ctx.print(`mcp: ${(e as Error).message}`, 'error');
  }
}

/** `/mcp login NAME`: the OAuth login (the browser, or the address printed), then the server connected again. */
async function loginTo(name: string, ctx: CommandContext): Promise<void> {
  try {
    const s = await ctx.runtime.loginMcp(name, (text) => ctx.print(`[${text}]`, 'notice'));
    if (s.state === 'ready') ctx.print(`[mcp: ${name}: logged in; connected, ${s.tools} tool${s.tools === 1 ? '' : 's'}]`, 'notice');
    else ctx.print(`mcp: ${name}: logged in, but ${stateOf(s)}`, 'error');
  } catch (e) {
    ctx.print(`mcp: ${name}: login failed: ${(e as Error).message}`, 'error');
  }
}

export const toolCommands: CommandFamily = {
  commands: [
    { name: 'tools', aliases: [], help: 'every tool, its source, how a call is decided' },
    { name: 'mcp', aliases: [], args: '[reconnect|login NAME]', help: 'MCP servers and their state; connect again; log in' },
    { name: 'sandbox', aliases: [], help: "the sandbox's mode and its paths" },
    { name: 'permissions', aliases: ['perms'], args: '[revoke N]', help: 'rules in force, grants; revoke one' },
  ],
  async run(cmd, arg, ctx) {
    if (cmd.name === 'permissions') {
      permissionsCommand(ctx, arg);
      return;
    }
    if (cmd.name === 'sandbox') {
      ctx.print(policyLines(ctx.runtime.sandbox).join('\n'), 'info');
      return;
    }
    if (cmd.name === 'tools') {
      if (arg) ctx.print('usage: /tools', 'error');
      else ctx.print(toolsText(ctx), 'info');
      return;
    }
    const m = /^(reconnect|login)\s+(\S+)$/.exec(arg);
    if (m?.[1] === 'reconnect') await reconnect(m[2]!, ctx);
    else if (m) await loginTo(m[2]!, ctx);
    else if (arg) ctx.print('usage: /mcp [reconnect NAME | login NAME]', 'error');
    else ctx.print(mcpText(ctx), 'info');
  },
  complete(cmd, arg): CompletionResult {
    const words = ['reconnect', 'login'].filter((w) => w.startsWith(arg));
    return { now: cmd.name === 'mcp' && !arg.includes(' ') && words.length ? completionOf(arg, words, { unique: ' ' }) : null };
  },
};

function permissionsCommand(ctx: CommandContext, arg: string): void {
  const engine = ctx.runtime.desk.engine;
  const grants = engine.grants();
  const revoke = /^revoke\s+(\d+)$/.exec(arg);
  if (revoke) {
    const g = grants[Number(revoke[1]) - 1];
    if (!g) {
      ctx.print(grants.length ? `no grant ${revoke[1]}: /permissions lists ${grants.length}` : 'no grants in this session', 'error');
      return;
    }
    engine.revoke(g);
    ctx.print(`[revoked: ${g.effect} ${ruleText(g)}]`, 'notice');
    return;
  }
  if (arg) {
    ctx.print('usage: /permissions [revoke N]', 'error');
    return;
  }
  const rules = engine.rules().filter((r) => !grants.includes(r));
  const lines = ['rules in force:'];
  for (const r of rules) lines.push(`  ${r.effect.padEnd(5)}  ${ruleText(r)}  ${r.source.label}`);
  if (!rules.length) lines.push('  none: every tool that asks is asked, the others run');
  lines.push('grants of this session:');
  grants.forEach((g, i) => lines.push(`  ${i + 1}. ${g.effect} ${ruleText(g)}`));
  if (grants.length) lines.push('/permissions revoke N takes grant N back');
  else lines.push('  none');
  ctx.print(maskSecrets(lines.join('\n'), ctx.runtime.secrets), 'info');
}
