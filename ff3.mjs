import { spawn as ptySpawn } from '@lydell/node-pty';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
const CLI = '/work/wt/ui/bin/clm.cjs';
const res = { plain: [], setup: [] };
for (let i = 0; i < 12; i++) for (const setup of [false, true]) {
  const h = mkdtempSync(join(tmpdir(), 'ff-'));
  for (const d of ['config', 'state']) mkdirSync(join(h, d));
  const env = { ...process.env, HOME: h, XDG_CONFIG_HOME: join(h, 'config'), XDG_STATE_HOME: join(h, 'state'), TERM: 'xterm-256color', LANG: 'C.UTF-8' };
  delete env.NODE_EXTRA_CA_CERTS; delete env.NODE_OPTIONS;
  if (setup) spawnSync(process.execPath, [CLI, 'setup'], { env });
  const t0 = performance.now();
  const p = ptySpawn(process.execPath, [CLI, '-u', 'http://127.0.0.1:1/v1'], { cols: 100, rows: 30, env, cwd: h });
  let raw = '';
  await new Promise((r) => p.onData((d) => { raw += d; if (raw.includes('type a prompt')) r(); }));
  res[setup ? 'setup' : 'plain'].push(Math.round(performance.now() - t0));
  p.kill('SIGKILL');
  await new Promise(r => p.onExit(r));
}
const s = (a) => [...a].sort((x, y) => x - y);
const med = (a) => s(a)[Math.floor(a.length / 2)];
console.log(process.argv[2] ?? '', 'plain med', med(res.plain), 'min', s(res.plain)[0], '| setup med', med(res.setup), 'min', s(res.setup)[0]);
