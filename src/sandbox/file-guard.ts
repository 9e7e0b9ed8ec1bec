// The policy for file accesses clm makes itself on a tool's behalf — a plugin's clm.read_file /
// clm.write_file (plugins run in clm's own worker thread, so no process can be wrapped) and the
// builtin read_file / write_file. Each access is checked twice: the path as named, every symbolic
// link and `..` resolved, before it is opened; then what was actually opened, through
// /proc/self/fd, so a link swapped in between (a race with a command running meanwhile) is
// caught too. A write opens without truncating, checks, and only then truncates; a file it
// created where it may not write is removed again. A file with more than one hard link is not
// written: its other names may lie outside the writable roots. /proc is not readable at all
// (clm's own environment and memory are there).

import { lstatSync, readlinkSync } from 'node:fs';
import { readRefusal, readRefusalText, type SandboxPolicy, within, writeRefusal, writeRefusalText } from './policy.js';
import { realPathOf } from './workspace.js';

export class SandboxRefusal extends Error {
  override name = 'SandboxRefusal';
  readonly code = 'ESANDBOX';
  constructor(what: string) {
    super(`[sandbox: ${what}]`);
  }
}

/** The real path of an open descriptor ("(deleted)" kept, so a removed file is not mistaken for another). */
function openedPath(fd: number): string | null {
  if (process.platform !== 'linux') return null;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}

export class FileGuard {
  constructor(readonly policy: SandboxPolicy) {}

  private get confining(): boolean {
    return this.policy.mode !== 'full';
  }

  private refuseRead(p: string): void {
    if (!this.confining) return;
    if (within(p, '/proc')) throw new SandboxRefusal(`read of ${p} refused (processes are out of reach)`);
    const rule = readRefusal(this.policy, p);
    if (rule) throw new SandboxRefusal(readRefusalText(p, rule));
  }

  private refuseWrite(p: string): void {
    if (!this.confining) return;
    if (within(p, '/proc')) throw new SandboxRefusal(`write to ${p} refused (processes are out of reach)`);
    const r = writeRefusal(this.policy, p);
    if (r) throw new SandboxRefusal(writeRefusalText(this.policy, p, r));
  }

  /** Before opening `path` (relative to clm's working directory) for reading. Throws SandboxRefusal. */
  beforeRead(path: string): void {
    this.refuseRead(realPathOf(path));
  }

  /** After opening it: what the descriptor really is. */
  afterOpenRead(fd: number): void {
    const p = openedPath(fd);
    if (p !== null) this.refuseRead(p);
  }

  /** Before opening `path` for writing. */
  beforeWrite(path: string): void {
    if (!this.confining) return;
    const p = realPathOf(path);
    this.refuseWrite(p);
    let links = 1;
    try {
      const st = lstatSync(p);
      if (st.isFile()) links = st.nlink;
    } catch {
      /* not there yet */
    }
    if (links > 1)
      throw new SandboxRefusal(`write to ${p} refused (it has ${links} hard links; another may lie outside the writable roots)`);
  }

  /** After opening for writing (not yet truncated): what the descriptor really is, and how many names it has. */
  afterOpenWrite(fd: number, nlink: number): void {
    if (!this.confining) return;
    const p = openedPath(fd);
    if (p !== null) this.refuseWrite(p.replace(/ \(deleted\)$/, ''));
    if (nlink > 1)
      throw new SandboxRefusal(
        `write to ${p ?? 'the file'} refused (it has ${nlink} hard links; another may lie outside the writable roots)`,
      );
  }
}
