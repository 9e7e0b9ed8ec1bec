// `/context`: what the model is given besides the conversation — the context in use, the system
// prompt's size, and the project instructions (AGENTS.md files) in it, each with its size and
// whether the cap cut it.

import type { CommandContext, CommandFamily } from './command-context.js';
import type { InstructionFile, ProjectInstructions } from '../project-instructions.js';

/** One instruction file's size, and what the cap did to it. */
function fileState(f: InstructionFile): string {
  if (f.error) return `not read: ${f.error}`;
  if (f.used === f.size) return `${f.size} bytes`;
  return f.used ? `${f.size} bytes, cut to ${f.used} (agents_md_max_bytes)` : `${f.size} bytes, left out (agents_md_max_bytes)`;
}

/** The project instructions' lines of /context. */
function instructionLines(instr: ProjectInstructions | null): string[] {
  if (!instr) return ['project instructions: off (agents_md = false)'];
  if (!instr.files.length)
    return ['project instructions: none (no AGENTS.md or CLAUDE.md here, up to the repository root, or in the config directory)'];
  const w = Math.max(...instr.files.map((f) => f.shown.length)) + 2;
  return [
    'project instructions (the nearest last; it wins):',
    ...instr.files.map((f) => `  ${f.shown}${' '.repeat(w - f.shown.length)}${fileState(f)}`),
  ];
}

function contextText(ctx: CommandContext): string {
  const agent = ctx.runtime.agent;
  const used = agent.ctxInUse;
  const max = agent.ctxMax;
  const system = agent.messages.find((m) => m.role === 'system')?.content ?? '';
  return [
    `context: ~${used} tokens in use${max ? ` of ${max} (${Math.round((used / max) * 100)}%)` : ''}, ${agent.messages.length} messages`,
    `system prompt: ${Buffer.byteLength(system)} bytes`,
    ...instructionLines(ctx.runtime.instructions),
  ].join('\n');
}

export const contextCommands: CommandFamily = {
  commands: [{ name: 'context', aliases: [], help: 'context in use, system prompt, AGENTS.md files' }],
  run(_cmd, arg, ctx) {
    if (arg) ctx.print('usage: /context', 'error');
    else ctx.print(contextText(ctx), 'info');
  },
};
