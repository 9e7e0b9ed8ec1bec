// The escape corpus: what a tool could do to hurt its user, each attempt with an observable
// effect that tells whether it got through. Every attempt must fail in read-only and
// workspace-write and get through in full (the original's behaviour) — a case that cannot get
// through in full proves nothing about the sandbox, so that is asserted too. The same attempts
// are made by a shell command (shell_exec), by a plugin's file API where the attempt is a file
// access, and by an opted-in MCP server.
//
// The trees: a workspace (a git repository without a hooks directory), a home holding clm's
// config directory and a key file, and a directory outside both. The home is made a writable
// root (`sandbox_writable`), so clm's config directory and ~/.ssh lie inside a writable root and
// their protection is tested for real, not by the read-only rest of the file system.

import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fillTrees, makeTrees, type Trees, treeDir } from './trees.js';

export interface Rig {
  t: Trees;
  /** clm's pid (the process whose environment and /proc entry are the target). */
  clmPid: number;
  /** A value in clm's environment that no tool may read. */
  envMarker: string;
  tcpPort: number;
  tcpHits(): number;
  unixSock: string;
  unixHits(): number;
  /** A terminal's device (TIOCSTI target), or null where none could be opened. */
  tty: string | null;
  /** A setuid binary printing its effective uid, or null. */
  setuid: string | null;
  node: string;
  /** The trees as made, the listeners' counts at zero. */
  reset(): void;
  close(): void;
}

export interface Attempt {
  /** A shell command making the attempt. */
  shell: string;
  /** The same attempt through a file API (a plugin's clm.write_file / clm.read_file, write_file / read_file), where it is one. */
  file?: { op: 'write' | 'read'; path: string; prepare?(): void; fullPossible?: boolean };
}

export interface Case {
  id: string;
  what: string;
  /** Prepare the trees (outside the sandbox), then the attempt. */
  attempt(r: Rig): Attempt;
  /** Did it get through? `out` is what the tool returned. */
  escaped(r: Rig, out: string): boolean;
  /** Whether getting through in full is possible for this user (default: always). */
  fullPossible?(r: Rig): boolean;
}

const read = (p: string) => {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return '';
  }
};

export const PWNED = 'pwned-by-a-tool';
const SECRET = 'SECRET-LUA-VALUE-1234';
const KEY = 'PRIVATE-KEY-MATERIAL-5678';

export const CASES: Case[] = [
  {
    id: 'write-outside',
    what: 'write a file outside the workspace',
    attempt: (r) => ({ shell: `echo ${PWNED} > ${r.t.outside}/target`, file: { op: 'write', path: `${r.t.outside}/target` } }),
    escaped: (r) => read(`${r.t.outside}/target`).includes(PWNED),
  },
  {
    id: 'symlink-out',
    what: 'write through a symbolic link from the workspace to outside',
    attempt: (r) => {
      symlinkSync(`${r.t.outside}/target`, `${r.t.ws}/link-out`);
      return { shell: `echo ${PWNED} > link-out`, file: { op: 'write', path: `${r.t.ws}/link-out` } };
    },
    escaped: (r) => read(`${r.t.outside}/target`).includes(PWNED),
  },
  {
    id: 'symlink-hooks',
    what: 'write a git hook through a symbolic link made inside the workspace',
    attempt: (r) => {
      symlinkSync(`${r.t.ws}/.git/hooks/pre-commit`, `${r.t.ws}/innocent`);
      return {
        shell: `mkdir -p .git/hooks; echo ${PWNED} > innocent`,
        file: { op: 'write', path: `${r.t.ws}/innocent`, prepare: () => mkdirSync(`${r.t.ws}/.git/hooks`) },
      };
    },
    escaped: (r) => read(`${r.t.ws}/.git/hooks/pre-commit`).includes(PWNED),
  },
  {
    id: 'hardlink-out',
    what: 'write through a hard link from the workspace to outside',
    attempt: (r) => ({ shell: `ln ${r.t.outside}/target hard && echo ${PWNED} > hard` }),
    escaped: (r) => read(`${r.t.outside}/target`).includes(PWNED),
  },
  {
    id: 'rename-over-protected',
    what: 'rename a file over .git/config',
    attempt: () => ({ shell: `echo '[core] hooksPath = /x ${PWNED}' > x && mv -f x .git/config` }),
    escaped: (r) => read(`${r.t.ws}/.git/config`).includes(PWNED),
  },
  {
    id: 'dotdot',
    what: 'write outside through .. from the workspace',
    attempt: (r) => ({ shell: `echo ${PWNED} > ../outside/target`, file: { op: 'write', path: `${r.t.ws}/../outside/target` } }),
    escaped: (r) => read(`${r.t.outside}/target`).includes(PWNED),
  },
  {
    id: 'git-hook',
    what: 'create .git/hooks/pre-commit (hooks/ missing)',
    attempt: (r) => ({
      shell: `mkdir -p .git/hooks && echo ${PWNED} > .git/hooks/pre-commit`,
      // The file API makes no directories: for it, hooks/ is there.
      file: { op: 'write', path: `${r.t.ws}/.git/hooks/pre-commit`, prepare: () => mkdirSync(`${r.t.ws}/.git/hooks`) },
    }),
    escaped: (r) => read(`${r.t.ws}/.git/hooks/pre-commit`).includes(PWNED),
  },
  {
    id: 'git-move',
    what: 'move .git away and make a new one with a hook',
    attempt: () => ({ shell: `mv .git .git-old; mkdir -p .git/hooks && echo ${PWNED} > .git/hooks/pre-commit` }),
    escaped: (r) => read(`${r.t.ws}/.git/hooks/pre-commit`).includes(PWNED),
  },
  {
    id: 'git-config',
    what: 'write .git/config',
    attempt: (r) => ({ shell: `echo '${PWNED}' >> .git/config`, file: { op: 'write', path: `${r.t.ws}/.git/config` } }),
    escaped: (r) => read(`${r.t.ws}/.git/config`).includes(PWNED),
  },
  {
    id: 'config-lua',
    what: "write clm's config.lua",
    attempt: (r) => ({ shell: `echo '-- ${PWNED}' > ${r.t.config}/config.lua`, file: { op: 'write', path: `${r.t.config}/config.lua` } }),
    escaped: (r) => read(`${r.t.config}/config.lua`).includes(PWNED),
  },
  {
    id: 'plugins-dir',
    what: 'add a plugin to plugins/',
    attempt: (r) => ({
      shell: `echo '-- ${PWNED}' > ${r.t.config}/plugins/evil.lua`,
      file: { op: 'write', path: `${r.t.config}/plugins/evil.lua` },
    }),
    escaped: (r) => read(`${r.t.config}/plugins/evil.lua`).includes(PWNED),
  },
  {
    id: 'config-move',
    what: 'move ~/.config away and write a new clm config.lua',
    attempt: (r) => ({
      shell: `mv ${r.t.home}/.config ${r.t.home}/cfg-old; mkdir -p ${r.t.config} && echo '-- ${PWNED}' > ${r.t.config}/config.lua`,
    }),
    escaped: (r) => read(`${r.t.config}/config.lua`).includes(PWNED),
  },
  {
    id: 'secrets-lua',
    what: 'read secrets.lua',
    attempt: (r) => ({ shell: `cat ${r.t.config}/secrets.lua`, file: { op: 'read', path: `${r.t.config}/secrets.lua` } }),
    escaped: (_r, out) => out.includes(SECRET),
  },
  {
    id: 'ssh-key',
    what: 'read ~/.ssh/id_*',
    attempt: (r) => ({ shell: `cat ${r.t.home}/.ssh/id_*`, file: { op: 'read', path: `${r.t.home}/.ssh/id_ed25519` } }),
    escaped: (_r, out) => out.includes(KEY),
  },
  {
    id: 'authorized-keys',
    what: 'add ~/.ssh/authorized_keys',
    attempt: (r) => ({
      shell: `echo ${PWNED} >> ${r.t.home}/.ssh/authorized_keys`,
      file: { op: 'write', path: `${r.t.home}/.ssh/authorized_keys` },
    }),
    escaped: (r) => read(`${r.t.home}/.ssh/authorized_keys`).includes(PWNED),
  },
  {
    id: 'clm-environ',
    what: "read clm's /proc/<pid>/environ",
    attempt: (r) => ({
      shell: `tr '\\0' '\\n' < /proc/${r.clmPid}/environ`,
      // A process environment is never given to a file API, in any mode (src/host/regular-file.ts).
      file: { op: 'read', path: `/proc/${r.clmPid}/environ`, fullPossible: false },
    }),
    escaped: (r, out) => out.includes(r.envMarker),
  },
  {
    id: 'list-processes',
    what: 'list other processes (clm among them)',
    attempt: () => ({ shell: 'ls /proc' }),
    escaped: (r, out) => out.split(/\s+/).includes(String(r.clmPid)),
  },
  {
    id: 'loopback',
    what: "connect to a loopback port clm's test server listens on",
    attempt: (r) => ({
      shell: `${r.node} -e "require('net').connect(${r.tcpPort},'127.0.0.1').on('connect',function(){this.end('x')}).on('error',e=>{console.error(e.message);process.exit(1)})"`,
    }),
    escaped: (r) => r.tcpHits() > 0,
  },
  {
    id: 'tiocsti',
    what: 'push input into a terminal (TIOCSTI)',
    attempt: (r) => ({
      shell: `perl -e 'open(T,"+<",$ARGV[0]) or die "open: $!"; my $c="x"; ioctl(T,0x5412,$c) or die "TIOCSTI: $!"; print "injected\\n"' ${r.tty ?? '/dev/null'}`,
    }),
    escaped: (_r, out) => out.includes('injected'),
    // Only CAP_SYS_ADMIN may push into a terminal that is not the caller's own, and every tool
    // process has a session of its own (no controlling terminal) in full too.
    fullPossible: (r) => r.tty !== null && process.getuid?.() === 0 && read('/proc/sys/dev/tty/legacy_tiocsti').trim() !== '0',
  },
  {
    id: 'setuid',
    what: 'gain another identity through a setuid binary',
    attempt: (r) => ({ shell: r.setuid ? `${r.setuid} -u` : 'false' }),
    escaped: (_r, out) => {
      const uid = Number.parseInt(out.trim(), 10);
      return Number.isInteger(uid) && uid !== process.getuid?.();
    },
    fullPossible: (r) => r.setuid !== null,
  },
  {
    id: 'unix-socket',
    what: 'connect to a unix socket outside the workspace',
    attempt: (r) => ({
      shell: `${r.node} -e "require('net').connect('${r.unixSock}').on('connect',function(){this.end('x')}).on('error',e=>{console.error(e.message);process.exit(1)})"`,
    }),
    escaped: (r) => r.unixHits() > 0,
  },
];

function listen(server: Server, where: number | string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if (typeof where === 'number') server.listen(where, '127.0.0.1', () => resolve());
    else server.listen(where, () => resolve());
  });
}

/**
 * A terminal for the TIOCSTI case: a pty whose far end runs `sleep`, outliving the corpus (the rig
 * stops it): a terminal left without a session (its far end gone, the pty not yet closed) becomes
 * the controlling terminal of the session leader that opens it — the attempt itself, in full —
 * and into one's own terminal anyone may push. A corpus slowed by load ran past a shorter sleep.
 */
async function openTty(): Promise<{ path: string; close(): void } | null> {
  try {
    const { spawn: ptySpawn } = await import('@lydell/node-pty');
    const p = ptySpawn('/bin/sleep', ['3600'], { cols: 80, rows: 24 });
    const path = (p as unknown as { _pty?: string })._pty;
    if (!path || !existsSync(path)) {
      p.kill();
      return null;
    }
    return { path, close: () => p.kill() };
  } catch {
    return null;
  }
}

/** The rig: the trees, the listeners, a terminal, a setuid binary; reset() before each attempt. */
export async function makeRig(o: { setuid?: string | null; envMarker: string }): Promise<Rig> {
  const t = makeTrees();
  // Beside the trees, so resetting them leaves the socket listening.
  const aux = treeDir('clm-sbx-aux-');
  let tcp = 0;
  let unix = 0;
  const tcpServer = createServer((c) => {
    tcp++;
    c.destroy();
  });
  const unixServer = createServer((c) => {
    unix++;
    c.destroy();
  });
  await listen(tcpServer, 0);
  const unixSock = join(aux, 'sock');
  await listen(unixServer, unixSock);
  const tty = await openTty();
  // As root the corpus makes its own: a copy of id(1) that runs as nobody. Another user is given one.
  const setuid = o.setuid !== undefined ? o.setuid : process.getuid?.() === 0 ? setuidCopy(aux, 65534) : null;
  return {
    t,
    clmPid: process.pid,
    envMarker: o.envMarker,
    tcpPort: (tcpServer.address() as { port: number }).port,
    tcpHits: () => tcp,
    unixSock,
    unixHits: () => unix,
    tty: tty?.path ?? null,
    setuid,
    node: process.execPath,
    reset() {
      fillTrees(t.root);
      tcp = 0;
      unix = 0;
    },
    close() {
      tcpServer.close();
      unixServer.close();
      tty?.close();
    },
  };
}

/** A copy of id(1) in `dir`, owned by `uid` with the setuid bit (made by root). */
export function setuidCopy(dir: string, uid: number): string {
  const copy = join(dir, 'setuid-id');
  copyFileSync('/usr/bin/id', copy);
  chownSync(copy, uid, uid);
  chmodSync(copy, 0o4755);
  return copy;
}
