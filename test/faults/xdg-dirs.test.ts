// Fault battery, odd XDG and HOME values: XDG_CONFIG_HOME (or HOME) naming a file, /dev/null, a
// path through a file or a relative path means no configuration, with a warning — as a missing
// directory means none, without one. XDG_STATE_HOME (or HOME) likewise means sessions cannot be
// saved: said once, and the run goes on without saving. Nothing of it is fatal, but resuming a
// session that cannot be reached, and `clm setup`, which has nowhere to write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as oa from '../fixtures/openai-replies.js';
import { faultSuite } from '../fixtures/fault-suite.js';
import { runCli, show } from '../fixtures/run-cli.js';
import { tally } from '../fixtures/tally.js';
import { SessionLog } from '../../src/cli/session-log.js';
import { Secrets } from '../../src/host/redact.js';

const { mock, dirs, run } = await faultSuite({ script: () => oa.text('ok') });

const aFile = () => {
  const f = join(dirs.root, 'a-file');
  writeFileSync(f, 'not a directory\n');
  return f;
};
const noStack = (stderr: string) => assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
const SESSION_LINE = /^session: \S+ \(resume with clm -r \S+\)$/m;

const badConfigHomes: [string, () => string, string][] = [
  ['a file', aFile, 'is not a directory'],
  ['/dev/null', () => '/dev/null', 'is not a directory'],
  ['a path through a file', () => join(aFile(), 'sub'), 'is not a directory (a part of the path is a file)'],
  ['a relative path', () => 'relative/config', 'is not an absolute path'],
];

for (const [what, value, why] of badConfigHomes) {
  test(`XDG_CONFIG_HOME naming ${what}: no configuration, a warning, the run goes on (and is saved)`, async () => {
    const v = value();
    const r = await run(['-o', 'hi'], { env: { XDG_CONFIG_HOME: v } });
    assert.equal(r.code, 0, show(r));
    assert.equal(r.stdout, 'ok\n');
    const notices = r.stderr.split('\n').filter((l) => l.startsWith('notice: config'));
    assert.deepEqual(notices, [`notice: config: XDG_CONFIG_HOME (${v}) ${why}; running without configuration`]);
    assert.match(r.stderr, SESSION_LINE);
    noStack(r.stderr);
    tally('faults', 1);
  });
}

test('XDG_CONFIG_HOME missing: no configuration and no warning, as always', async () => {
  const r = await run(['-o', 'hi'], { env: { XDG_CONFIG_HOME: join(dirs.root, 'nowhere') } });
  assert.equal(r.code, 0, show(r));
  assert.doesNotMatch(r.stderr, /notice: config/);
  tally('faults', 1);
});

for (const [what, value] of [
  ['a file', aFile],
  ['/dev/null', () => '/dev/null'],
] as const) {
  test(`XDG_STATE_HOME naming ${what}: sessions cannot be saved, said once; the run goes on`, async () => {
    const v = value();
    const r = await run(['-o', 'hi', '--output-format', 'json'], { env: { XDG_STATE_HOME: v } });
    assert.equal(r.code, 0, show(r));
    const o = JSON.parse(r.stdout);
    assert.equal(o.result, 'ok');
    assert.equal(o.session_id, null);
    assert.deepEqual(
      r.stderr.split('\n').filter((l) => l.includes('session')),
      [`notice: session logging disabled: cannot use the session directory: XDG_STATE_HOME (${v}) is not a directory`],
    );
    noStack(r.stderr);
    tally('faults', 1);
  });
}

test('XDG_STATE_HOME unusable: resuming a session fails with a clear message', async () => {
  const r = await run(['-r', '20261201-120000-0badc0de', '-o', 'hi'], { env: { XDG_STATE_HOME: '/dev/null' } });
  assert.equal(r.code, 1, show(r));
  assert.equal(r.stderr, 'clm: cannot use the session directory: XDG_STATE_HOME (/dev/null) is not a directory\n');
  assert.equal(mock.posts.length, 0);
  tally('faults', 1);
});

test('HOME naming /dev/null (no XDG variables): neither configuration nor sessions, both said; the run goes on', async () => {
  const r = await run(['-o', 'hi'], { env: { HOME: '/dev/null', XDG_CONFIG_HOME: undefined, XDG_STATE_HOME: undefined } });
  assert.equal(r.code, 0, show(r));
  assert.equal(r.stdout, 'ok\n');
  assert.match(r.stderr, /^notice: config: HOME \(\/dev\/null\) is not a directory; running without configuration$/m);
  assert.match(r.stderr, /^notice: session logging disabled: cannot use the session directory: HOME \(\/dev\/null\) is not a directory$/m);
  assert.doesNotMatch(r.stderr, SESSION_LINE);
  tally('faults', 1);
});

test('HOME that does not exist: no configuration (quietly), sessions not saved, and no home directory made', async () => {
  const home = join(dirs.root, 'no-such-home');
  const r = await run(['-o', 'hi'], { env: { HOME: home, XDG_CONFIG_HOME: undefined, XDG_STATE_HOME: undefined } });
  assert.equal(r.code, 0, show(r));
  assert.doesNotMatch(r.stderr, /notice: config/);
  assert.match(
    r.stderr,
    new RegExp(`^notice: session logging disabled: cannot use the session directory: HOME \\(${home}\\) does not exist$`, 'm'),
  );
  assert.ok(!existsSync(home), 'clm made a home directory');
  tally('faults', 1);
});

test('clm setup with XDG_CONFIG_HOME naming /dev/null: exit 1 saying why', async () => {
  const r = await runCli(['setup'], { dirs, env: { XDG_CONFIG_HOME: '/dev/null' } });
  assert.equal(r.code, 1, show(r));
  assert.match(r.stderr, /^setup: XDG_CONFIG_HOME \(\/dev\/null\) is not a directory$/m);
  noStack(r.stderr);
  tally('faults', 1);
});

test('the session directory failing is said once, however often a fresh session is started (/clear)', () => {
  const notices: string[] = [];
  const log = new SessionLog({ meta: {}, secrets: new Secrets(), env: { XDG_STATE_HOME: '/dev/null' }, notice: (t) => notices.push(t) });
  log.open();
  log.rotate();
  log.rotate();
  log.close();
  assert.deepEqual(notices, ['session logging disabled: cannot use the session directory: XDG_STATE_HOME (/dev/null) is not a directory']);
  tally('faults', 1);
});
