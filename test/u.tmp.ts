import { loadPlugins } from '../src/lua/index.js';
import { invoke, startLoopback } from './lua/helpers.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
const { server } = await startLoopback();
server.onGet('/big', { body: 'x'.repeat(5 * 1024 * 1024) });
const d = mkdtempSync(join(tmpdir(), 'corpus-'));
execFileSync('mkfifo', [join(d, 'fifo')]);
writeFileSync(join(d, 'huge'), ''); truncateSync(join(d, 'huge'), 100 * 1024 * 1024);
const host = await loadPlugins({ dirs: ['test/fixtures/lua-corpus'], watchdogMs: 400 });
console.log(host.errors);
const src = (await import('node:fs')).readFileSync('test/fixtures/lua-corpus/corpus.lua', 'utf8');
const names = [...src.matchAll(/^cases\.(\w+) =/gm)].map((m) => m[1]);
const libs = ["os", "io", "debug", "package", "coroutine", "require", "load", "loadstring", "dofile", "loadfile", "collectgarbage", "print", "warn", "module", "setfenv", "getfenv", "newproxy", "jit", "ffi"].map((n) => 'lib_' + n);
for (const c of [...libs, ...names]) {
  const t0 = Date.now();
  const r = await invoke(host, 'attempt', { case: c, fifo: join(d, 'fifo'), huge: join(d, 'huge'), dir: d, base: server.url });
  console.log(c, Date.now() - t0, JSON.stringify(r).slice(0, 200));
}
for (const k of ['dodge_spin_pcall','dodge_error_handler','dodge_sort','dodge_gsub','dodge_tostring','dodge_close','dodge_task','dodge_many_tasks','dodge_sleep_slices','dodge_recursive_pcall','dodge_fork_bomb','bomb_table','bomb_string_doubling','bomb_closures','bomb_task_results','runaway_find','runaway_match']) {
  const t0 = Date.now();
  const r = await invoke(host, k);
  const p = await invoke(host, 'ping'); const b = await invoke(host, 'bystander_ping');
  console.log(k, Date.now() - t0, JSON.stringify(r).slice(0, 200), JSON.stringify(p), JSON.stringify(b));
}
await host.close(); await server.close();
