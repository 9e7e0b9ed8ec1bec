// Telling a command the policy stopped from one that failed on its own: the output of a failed
// command is read for the errors only the sandbox causes here — a read-only file system (EROFS)
// or a refused access (EACCES) or move (EBUSY) on a path the policy names, a hard link across
// the sandbox's mounts (EXDEV), a network that is not there — and each is checked against the
// policy before it is said: a read-only error on a path inside the writable roots is the
// command's own business, not the sandbox's.

import { isAbsolute, resolve } from 'node:path';
import { readRefusal, readRefusalText, type SandboxPolicy, within, writeRefusal, writeRefusalText } from './policy.js';
import { realPathOf } from './workspace.js';

/** Said when a confined command never began: the sandbox could not be set up (bwrap says why, above it). */
export const NOT_SET_UP = '[sandbox: it could not be set up (the lines above); nothing was run]';

const EROFS = /read-only file system/i;
const EACCES = /permission denied|EACCES/i;
const EBUSY = /device or resource busy|EBUSY/i;
const EXDEV = /invalid cross-device link|EXDEV/i;
const OFFLINE =
  /network is unreachable|temporary failure in name resolution|could not resolve host|couldn't resolve host|name or service not known|no address associated with hostname|getaddrinfo|ECONNREFUSED|connection refused|EAI_AGAIN|ENETUNREACH|unable to resolve host/i;

/**
 * Paths a message line names, the likeliest first: the one right before the error
 * (`bash: line 1: /x: Read-only file system`), then quoted ones ('…', "…", ‘…’), then shell style
 * (`cannot create /x:`, `sh: /x: …`).
 */
export function pathsIn(line: string): string[] {
  const near: string[] = [];
  const out: string[] = [];
  const ERR = /(?:read-only file system|permission denied|device or resource busy|invalid cross-device link)/i;
  for (const m of line.matchAll(new RegExp(`(?:^|\\s)['"‘’\`]?([^\\s'"‘’\`:]+)['"‘’\`]?:\\s*${ERR.source}`, 'gi'))) near.push(m[1]!);
  for (const m of line.matchAll(/['"‘’`]([^'"‘’`\n]+)['"‘’`]/g)) out.push(m[1]!);
  for (const m of line.matchAll(/cannot create ([^\s:]+):/g)) out.push(m[1]!);
  // The program that reports comes first on the line (`/bin/bash: line 1: …`): it is not the file.
  const program = /^([^\s:]+):/.exec(line)?.[1];
  for (const m of line.matchAll(/(?:^|[\s:])((?:\.{0,2}\/|~\/)[^\s:'"]*)(?=:\s)/g)) if (m[1] !== program) out.push(m[1]!);
  for (const m of line.matchAll(/(?:ECONNREFUSED|connection refused)\s+(\/[^\s:'"]+)/gi)) out.push(m[1]!);
  // Next to the error a bare name is a file (`link-out: Read-only file system`), unless it is an
  // error code (`EROFS: read-only file system`); elsewhere a path has a slash or a dot. A URL is no path.
  const isPath = (p: string, bare: boolean) => (bare ? !/^E[A-Z]+$/.test(p) : /[/.]/.test(p)) && !/^[a-z]+:\/\//i.test(p);
  return [...new Set([...near.filter((p) => isPath(p, true)), ...out.filter((p) => isPath(p, false))])];
}

/** The longest lines kept for matching: an error line is short, a line of megabytes is data. */
const MAX_LINE = 4096;

/**
 * Collects the lines of a command's output that may tell of a refusal, as the output streams in
 * (however much of it the output cap keeps).
 */
export class RefusalScanner {
  private partial = '';
  readonly lines: string[] = [];
  private readonly decoder = new TextDecoder();

  push(chunk: Uint8Array): void {
    if (this.lines.length >= 64) return;
    const text = this.partial + this.decoder.decode(chunk, { stream: true });
    const parts = text.split('\n');
    this.partial = (parts.pop() ?? '').slice(-MAX_LINE);
    for (const l of parts) this.take(l);
  }

  end(): string[] {
    if (this.partial) this.take(this.partial);
    this.partial = '';
    return this.lines;
  }

  private take(line: string): void {
    if (this.lines.length >= 64 || line.length > MAX_LINE) return;
    if (EROFS.test(line) || EACCES.test(line) || EBUSY.test(line) || EXDEV.test(line) || OFFLINE.test(line)) this.lines.push(line);
  }
}

/** The protected path a move or removal of `p` would carry away (p is it or holds it), for EBUSY. */
function holding(policy: SandboxPolicy, p: string) {
  return [...policy.protected, ...policy.unreadable].find((r) => within(r.path, p));
}

/**
 * `[sandbox: …]` lines for the refusals `lines` (a failed command's error lines) show, checked
 * against `policy`; empty when none is the sandbox's doing.
 */
export function refusalsIn(lines: readonly string[], policy: SandboxPolicy): string[] {
  if (policy.mode === 'full') return [];
  const out = new Set<string>();
  const home = process.env.HOME;
  const real = (p: string) => {
    const abs = p.startsWith('~/') && home ? home + p.slice(1) : isAbsolute(p) ? p : resolve(policy.cwd, p);
    return realPathOf(abs);
  };
  for (const line of lines) {
    if (out.size >= 4) break;
    const paths = pathsIn(line).map(real);
    if (EROFS.test(line) || EXDEV.test(line)) {
      let said = false;
      for (const p of paths) {
        const r = writeRefusal(policy, p);
        if (!r) continue;
        out.add(
          EXDEV.test(line)
            ? `link to ${p} refused (${r.why === 'outside' ? 'outside the writable roots' : r.why})`
            : writeRefusalText(policy, p, r),
        );
        said = true;
        break;
      }
      // No path in the message (perl's "Read-only file system at -e line 1"): every writable place is known to the policy.
      if (!said && EROFS.test(line) && !paths.some((p) => policy.writable.some((w) => within(p, w))))
        out.add(`a write outside the writable roots was refused (${policy.mode})`);
      continue;
    }
    if (EACCES.test(line)) {
      for (const p of paths) {
        const hidden = readRefusal(policy, p);
        if (hidden) {
          out.add(readRefusalText(p, hidden));
          break;
        }
        const w = writeRefusal(policy, p);
        if (w && w.why === 'protected') {
          out.add(writeRefusalText(policy, p, w));
          break;
        }
      }
      continue;
    }
    if (EBUSY.test(line)) {
      for (const p of paths) {
        const held = holding(policy, p);
        if (held) {
          out.add(`move or removal of ${p} refused (protected: ${held.what})`);
          break;
        }
      }
      continue;
    }
    if (OFFLINE.test(line)) {
      // A unix socket outside the writable roots is masked, network or not.
      const refused = /ECONNREFUSED|connection refused/i.test(line);
      const sock = refused ? paths.find((p) => !policy.writable.some((w) => within(p, w))) : undefined;
      if (sock) out.add(`connection to the unix socket ${sock} refused (outside the writable roots)`);
      else if (!policy.network) out.add('network is off');
    }
  }
  return [...out].map((t) => `[sandbox: ${t}]`);
}
