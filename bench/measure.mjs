// How the bench measures one whole process, shared by bench/run.mjs, bench/budgets.mjs and
// bench/ab.mjs.
//
//   measure(argv, opts)       wall time (around the spawn), user and sys CPU of the process and its
//                             threads at 1 ms resolution (bash's `time`: getrusage of the children),
//                             peak RSS and minor page faults (GNU time's %M and %R), exit status
//                             and output.
//   instructions(argv, opts)  instructions executed, all threads (valgrind's callgrind): the same
//                             figure however loaded the machine is, to within about 1 %.
//
// GNU time alone reports CPU at 10 ms resolution, too coarse for a 40 ms start-up; bash's `time`
// keyword reports it to the millisecond, so bash runs GNU time, which runs the command.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const GNU_TIME = '/usr/bin/time';
const scratch = mkdtempSync(join(tmpdir(), 'clm-measure-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
let seq = 0;

/** Why the measuring tools are missing, or null when they are there. */
export function missingTools() {
  if (!existsSync(GNU_TIME)) return `${GNU_TIME} (GNU time, Debian package \`time\`) is needed for CPU and peak RSS`;
  if (!existsSync('/bin/bash')) return '/bin/bash is needed for CPU time at 1 ms resolution';
  return null;
}

/** Whether valgrind is installed (instruction counts). */
export const haveValgrind = () => ['/usr/bin/valgrind', '/usr/local/bin/valgrind'].some(existsSync);

// $1 = the file for bash's times, $2 = the file for GNU time's; then the command. The command's
// own stderr goes to fd 3 (the real stderr); bash's report goes to its stderr, the file.
const WRAP = 'f=$1; g=$2; shift 2; exec 3>&2 2>"$f"; TIMEFORMAT="%3U %3S"; time /usr/bin/time -f "%M %R" -o "$g" "$@" 2>&3';

/** Run `file args` to its end (SIGKILL after timeoutMs); resolves to { code, signal, stdout, stderr }. */
function run(file, args, { env, cwd, stdin, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, cwd, stdio: [stdin, 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * Run argv; resolve to { wall, user, sys, cpu (s), rssKiB, faults, code, signal, stdout, stderr }
 * (faults: minor page faults, each a fresh page the process touched). A run that was killed or
 * whose figures are unreadable has NaN figures and `signal` set.
 */
export async function measure(argv, { env, cwd, timeoutMs = 120_000, stdin = 'ignore' } = {}) {
  const cpuFile = join(scratch, `cpu-${++seq}`);
  const rssFile = join(scratch, `rss-${seq}`);
  const t0 = process.hrtime.bigint();
  const { code, signal, stdout, stderr } = await run('/bin/bash', ['-c', WRAP, 'measure', cpuFile, rssFile, ...argv], {
    env,
    cwd,
    stdin,
    timeoutMs,
  });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  let user = NaN;
  let sys = NaN;
  let rssKiB = NaN;
  let faults = NaN;
  let report = '';
  try {
    [user, sys] = readFileSync(cpuFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number);
    report = readFileSync(rssFile, 'utf8');
    [rssKiB, faults] = report.trim().split('\n').at(-1).split(' ').map(Number);
  } catch {
    /* reported as NaN */
  }
  rmSync(cpuFile, { force: true });
  rmSync(rssFile, { force: true });
  // GNU time reports a command that died of a signal as "Command terminated by signal N".
  const killedBy = /terminated by signal (\d+)/.exec(report)?.[1];
  const bad = signal || killedBy || ![user, sys, rssKiB, faults].every(Number.isFinite);
  return {
    wall,
    user: bad ? NaN : user,
    sys: bad ? NaN : sys,
    cpu: bad ? NaN : user + sys,
    rssKiB: bad ? NaN : rssKiB,
    faults: bad ? NaN : faults,
    code: code ?? -1,
    signal: signal ?? (killedBy ? `signal ${killedBy}` : bad ? 'no figures' : null),
    stdout,
    stderr,
  };
}

/** Instructions argv executes (every thread), from callgrind; resolves to { ir, code, stdout, stderr }. */
export async function instructions(argv, { env, cwd, timeoutMs = 600_000 } = {}) {
  const out = join(scratch, `callgrind-${++seq}`);
  const args = ['--tool=callgrind', `--callgrind-out-file=${out}`, `--log-file=${out}.log`, ...argv];
  const { code, stdout, stderr } = await run('valgrind', args, { env, cwd, stdin: 'ignore', timeoutMs });
  let ir = NaN;
  try {
    // One "Collected" line per process valgrind followed: the first is argv's own.
    const m = /Collected : (\d+)/.exec(readFileSync(`${out}.log`, 'utf8'));
    if (m) ir = Number(m[1]);
  } catch {
    /* NaN */
  }
  rmSync(out, { force: true });
  rmSync(`${out}.log`, { force: true });
  return { ir, code: code ?? -1, stdout, stderr };
}

// ---- statistics and tables -----------------------------------------------------------------

/** The value after `--name` on the command line (undefined when the flag is not there). */
export function argAfter(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

export function median(xs) {
  const a = xs.filter(Number.isFinite).sort((x, y) => x - y);
  const n = a.length;
  if (!n) return NaN;
  return n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

export function min(xs) {
  const a = xs.filter(Number.isFinite);
  return a.length ? Math.min(...a) : NaN;
}

export function max(xs) {
  const a = xs.filter(Number.isFinite);
  return a.length ? Math.max(...a) : NaN;
}

/** A Markdown table, numbers right-aligned. */
export function table(head, rows) {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? '').length)));
  const line = (r) => `| ${r.map((c, i) => (i === 0 ? String(c ?? '').padEnd(w[i]) : String(c ?? '').padStart(w[i]))).join(' | ')} |`;
  return [line(head), `|${w.map((n, i) => (i === 0 ? '-'.repeat(n + 2) : `${'-'.repeat(n + 1)}:`)).join('|')}|`, ...rows.map(line)].join(
    '\n',
  );
}

/** The environment without what would change what is measured (extra CA certs: ~85 ms at every start). */
export function quietEnv(extra = {}) {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k === 'NODE_EXTRA_CA_CERTS' || k === 'NODE_OPTIONS' || k.startsWith('CLM_') || k.startsWith('XDG_')) delete env[k];
  }
  return { ...env, ...extra };
}
