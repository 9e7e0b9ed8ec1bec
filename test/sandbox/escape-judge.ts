// The escape corpus (escape-corpus.ts) against the real bubblewrap, run by escape-runner.ts as a
// user, and judged: every attempt, by a shell command, an opted-in MCP server, the builtin file
// tools and a plugin's file API, is held in read-only and workspace-write, and gets through in
// full. escapes.test.ts runs it as this user, escapes-nobody.test.ts as an unprivileged one.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { bwrapOrSkip } from '../fixtures/bwrap.js';
import { tally } from '../fixtures/tally.js';
import { CASES } from './escape-corpus.js';
import { treeDir } from './trees.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUNNER = join(ROOT, 'test/sandbox/escape-runner.ts');
const MARKER = 'clm-key-marker-0123456789abcdef';

interface Line {
  channel: string;
  mode: string;
  id: string;
  escaped: boolean;
  fullPossible: boolean;
  out: string;
}

/** What workspace-write says about a refused attempt (the refusal recognised from the failure). */
const SAYS: Record<string, RegExp> = {
  'write-outside': /\[sandbox: write to \S+\/outside\/target refused \(workspace-write: outside the writable roots\)\]/,
  'symlink-out': /\[sandbox: write to \S+\/outside\/target refused/,
  'hardlink-out': /\[sandbox: link to \S+\/outside\/target refused/,
  'rename-over-protected': /\[sandbox: move or removal of \S+\/\.git\/config refused \(protected: git config\)\]/,
  'git-hook': /\[sandbox: write to \S+\/\.git\/hooks\/pre-commit refused \(protected: git hooks\)\]/,
  'config-lua': /\[sandbox: write to \S+\/config\.lua refused \(protected: clm's configuration\)\]/,
  'secrets-lua': /\[sandbox: read of \S+\/secrets\.lua refused \(protected: clm's secrets\)\]/,
  'ssh-key': /\[sandbox: read of \S+\/\.ssh\/\S+ refused \(protected: key file\)\]/,
  loopback: /\[sandbox: network is off\]/,
  'unix-socket': /\[sandbox: connection to the unix socket \S+\/sock refused/,
};

function runCorpus(mode: string, asNobody: string | null): Promise<Line[]> {
  const node = [process.execPath, '--import', 'tsx', RUNNER, mode];
  const env: NodeJS.ProcessEnv = { ...process.env, CLM_API_KEY: MARKER };
  delete env.CLM_TEST_TALLY; // the runner may not be able to write it; its attempts are counted here
  let argv = node;
  if (asNobody !== null) {
    env.CLM_CORPUS_SETUID = asNobody;
    env.HOME = '/nonexistent';
    argv = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...node];
  }
  return new Promise((resolve, reject) => {
    const c = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    c.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    c.on('error', reject);
    c.on('close', (code) => {
      if (code !== 0) return reject(new Error(`escape runner exited ${code}: ${err.slice(-2000)}`));
      resolve(
        out
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Line),
      );
    });
  });
}

/** Every case by a shell command and an MCP server, the file cases by the file APIs too; none got through in a confining mode, each in full. */
function judge(mode: string, lines: Line[]): void {
  tally('escapes', lines.length);
  const channel = (c: string) => lines.filter((l) => l.channel === c).map((l) => l.id);
  assert.deepEqual(
    channel('shell'),
    CASES.map((c) => c.id),
  );
  assert.deepEqual(
    channel('mcp'),
    CASES.map((c) => c.id),
  );
  assert.ok(channel('plugin').length > 0 && channel('builtin').length === channel('plugin').length);
  const problems: string[] = [];
  for (const l of lines) {
    const who = `${l.channel} ${l.mode} ${l.id}`;
    assert.equal(l.mode, mode);
    if (l.mode === 'full') {
      if (l.escaped !== l.fullPossible) problems.push(`${who}: ${l.fullPossible ? 'did not get through' : 'got through'}: ${l.out}`);
    } else if (l.escaped) problems.push(`${who}: GOT THROUGH: ${l.out}`);
    else if (l.channel === 'shell' && l.mode === 'workspace-write' && SAYS[l.id] && !SAYS[l.id]!.test(l.out))
      problems.push(`${who}: the refusal was not said: ${l.out}`);
    else if ((l.channel === 'builtin' || l.channel === 'plugin') && !/^\[sandbox: (write to|read of) \S+ refused \(/.test(l.out))
      problems.push(`${who}: the refusal was not said: ${l.out}`);
  }
  assert.deepEqual(problems, []);
}

const MODES = ['read-only', 'workspace-write', 'full'] as const;

/**
 * One test per mode, as this user (`asNobody` null) or as nobody (uid 65534, through setpriv;
 * only as root). The three modes' runners start at once: each is mostly waiting (for bwrap, a
 * server, a connection), and one file's tests share one deadline.
 */
export function corpusTests(asNobody: boolean): void {
  const skip = bwrapOrSkip().skip ?? (asNobody && process.getuid?.() !== 0 ? 'the suite does not run as root' : undefined);
  const who = asNobody ? 'as an unprivileged user (nobody)' : 'as this user';
  let runs: Map<string, Promise<Line[]>> | null = null;
  const start = () => {
    if (runs) return runs;
    // A setuid-root binary for nobody to try; it lives where nobody can reach it.
    let setuid: string | null = null;
    if (asNobody) {
      // The runner starts its MCP server with this Node inside the sandbox, where nobody has no
      // privilege left: a Node under a directory only root may enter (mktemp -d) cannot start it.
      const reach = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'test', '-x', process.execPath]);
      if (reach.status !== 0) throw new Error(`nobody cannot reach this Node (${process.execPath}): make its directories world-searchable`);
      setuid = join(treeDir('clm-suid-'), 'setuid-id');
      copyFileSync('/usr/bin/id', setuid);
      chmodSync(setuid, 0o4755);
    }
    runs = new Map(MODES.map((m) => [m, runCorpus(m, setuid)]));
    for (const p of runs.values()) p.catch(() => {}); // each is awaited by its test
    return runs;
  };
  for (const mode of MODES)
    test(`escape corpus ${who}, ${mode}: ${mode === 'full' ? 'every attempt gets through' : 'every attempt is held'}`, {
      skip,
    }, async () => {
      judge(mode, await start().get(mode)!);
    });
}
