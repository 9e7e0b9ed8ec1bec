// The words of permissions: the question a person is asked (one function, questionText, for the
// interactive UI, the REPL and one-shot runs alike) and `clm permissions explain`'s report. A
// question shows the whole call: a shell command with each part it was cut into and the rule that
// decided it; write_file and edit_file as a diff against the file as it is; anything else as its
// arguments. Control characters and bidi overrides are shown, not obeyed (forTerminal): what is
// allowed is what is read.

import { forTerminal } from '../core/terminal-text.js';
import type { PermissionCallInfo } from '../core/types.js';
import { readRegularFileSync } from '../host/regular-file.js';
import { argsText, type PartRuling, type Ruling, SHELL_TOOLS, stringArg, subjectText } from '../permissions/engine.js';
import { ruleText } from '../permissions/rule.js';
import type { OutsideQuestion } from '../sandbox/sandbox.js';

/** Files larger than this are not diffed (their new text is shown whole). */
const MAX_DIFF_BYTES = 1024 * 1024;

/**
 * What decided a part: `shell_exec(npm test *)  config.lua:3`, or the default; a command known to
 * only read, by the files it reads: `read-only command` (read_file's default), or the read_file rule.
 */
export function decidedBy(p: { rule: PartRuling['rule']; readOnly?: true }): string {
  const ro = p.readOnly ? 'read-only command: ' : '';
  if (!p.rule) return p.readOnly ? 'read-only command (reads are allowed by default)' : 'no rule (default)';
  return `${ro}${ruleText(p.rule)}  ${p.rule.source.label}`;
}

/** One line per part: `  allow  git status   shell_exec(git status *)  config.lua:3`. */
export function partLines(r: Ruling): string[] {
  const rows = r.parts.map((p) => [
    p.decision,
    subjectText(p.subject),
    p.subject.kind === 'unreadable' ? `${p.subject.why}` : decidedBy(p),
  ]);
  const w = Math.min(40, Math.max(0, ...rows.map((x) => x[1]!.length)));
  return rows.map(([d, s, why]) => `  ${d!.padEnd(5)}  ${s!.length <= w ? s!.padEnd(w) : s}  ${why}`);
}

/** The file's text, '' when it does not exist, null when it cannot be read or is too large. */
function currentText(path: string): string | null {
  try {
    return readRegularFileSync(path, MAX_DIFF_BYTES).toString('utf8');
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? '' : null;
  }
}

/** A unified diff of `before` → `after` (lines with their +/-/space), or null when there is nothing to compare. */
async function diffLines(path: string, before: string, after: string): Promise<string[]> {
  const { structuredPatch } = await import('diff');
  const patch = structuredPatch(path, path, before, after, 'as it is', 'after the call', { context: 3 });
  const out = [`--- ${before ? `${path} (as it is)` : '/dev/null (a new file)'}`, `+++ ${path} (after the call)`];
  if (!patch.hunks.length) out.push('  (no change)');
  for (const h of patch.hunks) {
    out.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    for (const l of h.lines) out.push(l);
  }
  return out;
}

/** The body of a write_file / edit_file question: the diff, or why there is none. */
async function fileChange(call: PermissionCallInfo): Promise<string[] | null> {
  const path = stringArg(call.args, 'path');
  if (path === undefined) return null;
  const before = currentText(path);
  if (call.name === 'write_file') {
    const content = stringArg(call.args, 'content');
    if (content === undefined) return null;
    if (before === null) return [`(${path} cannot be read to compare; its new text:)`, ...content.split('\n')];
    return diffLines(path, before, content);
  }
  const oldStr = stringArg(call.args, 'old_str');
  const newStr = stringArg(call.args, 'new_str');
  if (oldStr === undefined || newStr === undefined || before === null) return null;
  if (!oldStr || !before.includes(oldStr)) return null;
  const all = /"replace_all"\s*:\s*true/.test(call.args);
  const after = all ? before.split(oldStr).join(newStr) : before.replace(oldStr, () => newStr);
  return diffLines(path, before, after);
}

/**
 * The question: `allow tool NAME: SUMMARY`, then what the call does — a shell command's parts and
 * their rules, a file change as a diff — and how it would run (`sandbox`), each line made safe
 * for a terminal and masked by `mask`.
 */
export async function questionText(
  call: PermissionCallInfo,
  ruling: Ruling,
  o: { mask(s: string): string; sandbox?: string | null },
): Promise<string> {
  const lines: string[] = [];
  const summary = argsText(call.args);
  if (SHELL_TOOLS.has(call.name)) {
    lines.push(`allow tool ${call.name}: ${summary}`);
    lines.push(...partLines(ruling));
  } else if (call.name === 'write_file' || call.name === 'edit_file') {
    const change = await fileChange(call).catch(() => null);
    const path = stringArg(call.args, 'path');
    if (change && path !== undefined) lines.push(`allow tool ${call.name}: ${path}`, ...change);
    else lines.push(`allow tool ${call.name}${summary ? `: ${summary}` : ''}`);
    if (ruling.rule) lines.push(`  ${ruling.decision}  ${decidedBy(ruling)}`);
  } else {
    lines.push(`allow tool ${call.name}${summary ? `: ${summary}` : ''}`);
    if (ruling.rule) lines.push(`  ${ruling.decision}  ${decidedBy(ruling)}`);
  }
  if (o.sandbox) lines.push(o.sandbox);
  return forTerminal(o.mask(lines.join('\n')));
}

/**
 * The question whether a call the sandbox refused may run outside it, this once: the call, then
 * its refusals, the last with the question —
 * `[sandbox: write to /etc/hosts refused (read-only)] — run this call outside the sandbox once? y/N`.
 */
export function outsideText(q: OutsideQuestion, mask: (s: string) => string): string {
  const summary = argsText(q.args);
  const lines = [`${q.name}${summary ? `: ${summary}` : ''}`, ...q.refusals];
  lines[lines.length - 1] += ' — run this call outside the sandbox once? y/N';
  return forTerminal(mask(lines.join('\n')));
}

/** `clm permissions explain`'s report of one call. */
export function explainText(ruling: Ruling, sandbox: string | null): string {
  const out = [`${ruling.call.tool}: ${argsText(ruling.call.args)}`];
  if (!ruling.parts.length) out.push(`  ${ruling.decision.padEnd(5)}  (the whole call)  ${decidedBy(ruling)}`);
  else out.push(...partLines(ruling));
  const readOnly = ruling.decision === 'allow' && ruling.parts.some((p) => p.readOnly);
  const by = ruling.rule
    ? `rule ${ruleText(ruling.rule)} (${ruling.rule.source.label})`
    : readOnly
      ? 'default: read-only commands'
      : 'default';
  out.push(`decision: ${ruling.decision} (${by})`);
  if (sandbox) out.push(sandbox);
  return forTerminal(`${out.join('\n')}\n`);
}
