#!/usr/bin/env node
'use strict';
// The `clm` command. CommonJS on purpose: nothing here waits for Node's ES module loader. `clm -V`
// is answered from package.json without loading the program; everything else runs the bundled
// program, dist/cli.cjs, compiled from a V8 code cache kept in the state directory
// ($XDG_STATE_HOME/clm, else ~/.local/state/clm): a later start deserializes the functions the
// earlier run compiled instead of parsing and compiling them again. Node 20 has no compile cache
// of its own for modules, so the program is one script, run through vm.Script with cachedData.
//
// A cache file belongs to one build, one Node and one kind of run: its first line is the bundle's
// hash (written into the bundle by scripts/build.mjs), the bundle's size and mtime, Node's version
// and the mode. Any difference, or V8 refusing the data (another V8 flag set), makes this run
// compile from source and write a new cache when it exits with success (an interactive run: once
// it is ready for a prompt). One-shot runs and interactive ones compile different parts of the
// program, so each mode keeps its own file.
//
// A run whose arguments look like a one-shot (-o) runs the one-shot program, dist/cli-oneshot.cjs:
// the same program without what only other runs need (the UI, the REPL, the commands), half the
// code to read and set up. The guess only picks the program: one that turns out to be something
// else (a usage error, an -o that was a value) is handed to the whole program, dist/cli.cjs,
// before the one-shot program has done anything (src/cli/main.ts).
//
// Signals come first. While the program loads, SIGINT, SIGTERM and SIGHUP are held, not obeyed:
// Node's default action would end clm by the raw signal, without its exit status (130, 143, 129)
// or the result object --output-format json promises. The program takes them over as soon as it
// knows its output format (src/cli/signal-handlers.ts).

const fs = require('node:fs');
const args = process.argv.slice(2);
/** The first arguments that name a command of their own (src/cli/args.ts). */
const COMMANDS = new Set(['setup', 'models', 'permissions', 'diff', 'undo', 'sandbox', 'mcp']);
/** Writes the code cache of the program running, when one is due (see run). */
let cacheWrite = null;

if (args.length === 1 && (args[0] === '-V' || args[0] === '--version')) {
  // No require of package.json (the module loader's resolution costs more than reading it) and no
  // process.stdout (creating the stream loads the stream modules).
  const { version } = JSON.parse(fs.readFileSync(`${__dirname}/../package.json`, 'utf8'));
  try {
    fs.writeSync(1, `clm ${version}\n`);
  } catch {
    process.exitCode = 1; // a closed or full stdout: the version did not arrive
  }
} else {
  const held = [];
  const hold = (signal) => held.push(signal);
  const SIGNALS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
  for (const s of Object.keys(SIGNALS)) process.on(s, hold);
  globalThis[Symbol.for('clm.held-signals')] = {
    signals: held,
    release() {
      for (const s of Object.keys(SIGNALS)) process.off(s, hold);
    },
  };
  process.once('exit', (code) => {
    // Only a run that succeeded: one that failed early (a usage error, a bad config, a server
    // that is down) compiled little of what its kind of run needs, and a cache it wrote would be
    // accepted by every later start, leaving the rest to be compiled at each of them.
    if (code === 0) cacheWrite?.();
  });
  // An interactive run writes it as soon as it is ready for a prompt (src/cli/code-cache.ts):
  // what a long first session compiles later would be read, unused, at every start after it.
  globalThis[Symbol.for('clm.code-cache-now')] = () => cacheWrite?.();
  const oneshot = args.some((a) => a === '--oneshot' || a.startsWith('--oneshot=') || /^-[A-Za-z]*o/.test(a));
  globalThis[Symbol.for('clm.whole-program')] = () => {
    // What the one-shot program was to cache is not this run's.
    cacheWrite = null;
    run('cli.cjs', null);
  };
  try {
    if (oneshot && !COMMANDS.has(args[0])) run('cli-oneshot.cjs', codeCacheFile('oneshot'));
    else run('cli.cjs', codeCacheFile('interactive'));
  } catch (e) {
    process.stderr.write(`clm: cannot start: ${e?.message ? e.message : e}\n(run \`npm ci\` or \`npm run build\` first?)\n`);
    process.exit(held.length ? SIGNALS[held[0]] : 1);
  }
}

/**
 * Load and run dist/`name` through the code cache in `cacheFile` (null: none).
 *
 * Memory is what a start spends most on where a fresh page costs a fault in the hypervisor as well
 * (~15 µs a page on a cloud VM, against ~0.2 µs on bare metal): so the program's text and then the
 * cache are read into one buffer, the cache's data starts 8-byte aligned (V8 copies unaligned
 * data) and the bundle is already the function V8 compiles (no wrapped copy of its text).
 */
function run(name, cacheFile) {
  const path = require('node:path');
  const vm = require('node:vm');
  const file = path.join(__dirname, '..', 'dist', name);
  const fd = fs.openSync(file, 'r');
  const st = fs.fstatSync(fd);
  let cacheFd = -1;
  let cacheSize = 0;
  if (cacheFile) {
    try {
      // Non-blocking: a FIFO in its place would otherwise hold the start until something wrote.
      cacheFd = fs.openSync(cacheFile, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      const cst = fs.fstatSync(cacheFd);
      if (cst.isFile()) cacheSize = cst.size;
      else {
        fs.closeSync(cacheFd);
        cacheFd = -1;
      }
    } catch {
      /* no cache yet */
    }
  }
  const buffer = Buffer.allocUnsafeSlow(Math.max(st.size, cacheSize));
  readAll(fd, buffer, st.size);
  // ASCII (scripts/build.mjs makes it so): read as one-byte text, no UTF-8 to decode.
  const source = buffer.latin1Slice(0, st.size);
  const key = cacheFile && cacheKey(st, source);
  let cachedData;
  if (cacheFd >= 0) {
    try {
      const bytes = buffer.subarray(0, readAll(cacheFd, buffer, cacheSize));
      const nl = bytes.indexOf(10);
      if (key && nl > 0 && bytes.latin1Slice(0, nl).trimEnd() === key) cachedData = bytes.subarray(nl + 1);
    } catch {
      /* an unreadable cache: compiled from source */
    }
  }
  const script = new vm.Script(source, { filename: file, cachedData });
  if (key && (!cachedData || script.cachedDataRejected)) {
    cacheWrite = () => {
      cacheWrite = null;
      writeCodeCache(script, cacheFile, key);
    };
  }
  const module = { exports: {} };
  const url = require('node:url').pathToFileURL(file).href;
  // The program's import() of an ES module package (the MCP SDK, when a server is configured)
  // is this module's: a function V8 restores from a code cache has lost vm.Script's own callback.
  const load = (specifier) => import(specifier);
  script.runInThisContext()(module.exports, require, module, file, path.dirname(file), url, load);
}

/** Read up to `size` bytes of `fd` from its start into `buffer`; how many there were. Closes fd. */
function readAll(fd, buffer, size) {
  let n = 0;
  try {
    for (let r; n < size && (r = fs.readSync(fd, buffer, n, size - n, n)) > 0; ) n += r;
  } finally {
    fs.closeSync(fd);
  }
  return n;
}

/** The cache file for this kind of run, or null when there is no state directory to keep it in. */
function codeCacheFile(kind) {
  const env = process.env;
  const base = env.XDG_STATE_HOME || (env.HOME && `${env.HOME}/.local/state`);
  if (!base?.startsWith('/')) return null;
  // A HOME that does not exist is not made for a cache (nothing else of clm makes it either).
  if (!env.XDG_STATE_HOME && !isDirectory(env.HOME)) return null;
  // Guesses from the arguments, which only pick the file: a wrong one costs time, never
  // correctness. Help and the commands (setup, models, diff, …) compile little of the program; a
  // cache they wrote would leave the rest to be compiled at every later start, so they keep none.
  if (args.some((a) => a === '-h' || a === '--help') || COMMANDS.has(args[0])) return null;
  return `${base}/clm/code-cache/cli-${kind}.bin`;
}

function isDirectory(p) {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function cacheKey(st, source) {
  const build = /^\/\/ clm-build ([0-9a-f]+)\n/.exec(source)?.[1];
  if (!build) return null;
  return `clm-code-cache 2 ${build} ${st.size} ${Math.trunc(st.mtimeMs)} ${process.version} ${process.arch}`;
}

function writeCodeCache(script, cacheFile, key) {
  try {
    // V8 checks a cache against its flags: one made while the program has a flag changed (the
    // wasm tiering budget, during a compile) would be refused by every later start.
    globalThis[Symbol.for('clm.before-code-cache')]?.();
    const data = script.createCachedData();
    const dir = cacheFile.slice(0, cacheFile.lastIndexOf('/'));
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Written whole, then renamed: a concurrent start reads the old file or the new one.
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    try {
      // The key's line is padded so that the data after it starts at a multiple of 8.
      const head = `${key}${' '.repeat(7 - (key.length % 8))}\n`;
      fs.writeFileSync(tmp, Buffer.concat([Buffer.from(head, 'latin1'), data]), { mode: 0o600 });
      fs.renameSync(tmp, cacheFile);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  } catch {
    /* a read-only or full state directory: the next run compiles from source again */
  }
}
