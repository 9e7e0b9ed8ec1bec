// The pure parts of the interactive UI: tool summaries and tallies, the status bar, secret
// masking across streamed deltas, the prompt queue, the permission question, the probe schedule,
// the screen mode, and the transcript the agent's events make (collapsing, folding, replay).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent } from '../../src/core/events.js';
import { stripEscapes, Transcript } from '../../src/tui/index.js';
import { ECHO_MAX_LINES, errorBlock, headLines, noticeBlock, ReasoningBlock, userEcho } from '../../src/cli/ui/blocks.js';
import { originText } from '../../src/cli/tool-sources.js';
import { THEME } from '../../src/cli/ui/theme.js';
import { paint, sanitize, wrapText } from '../../src/tui/index.js';
import { check, fc } from '../fixtures/fuzz.js';
import { ConnectionProbe } from '../../src/cli/ui/connection-probe.js';
import { FramePacing } from '../../src/cli/ui/frame-pacing.js';
import { nextTask } from '../../src/tui/next-task.js';
import { deskKeyOf, ScreenAsker } from '../../src/cli/ui/permission-asker.js';
import { PermissionRecord } from '../../src/cli/ui/permission-question.js';
import { ANSWER_KEYS, PermissionDesk } from '../../src/cli/permission-desk.js';
import { PermissionEngine } from '../../src/permissions/engine.js';
import { parseRulesText } from '../../src/permissions/rules-file.js';
import { PromptQueue } from '../../src/cli/ui/prompt-queue.js';
import { modeBeforeConfig, modeOf, withoutLuaComments } from '../../src/cli/ui/screen-mode.js';
import { gauge, infoText, statusText, type StatusState } from '../../src/cli/ui/status-bar.js';
import { clampLine, countCall, emptyRoundCounts, tallyText, toolSummary } from '../../src/cli/ui/tool-summary.js';
import { TranscriptView } from '../../src/cli/ui/transcript-view.js';
import { TranscriptSearch } from '../../src/cli/ui/transcript-search.js';
import { Renderer } from '../../src/tui/renderer.js';
import { TextBlock } from '../../src/tui/components.js';
import { VirtualTerminal } from '../fixtures/virtual-terminal.js';
import { parseCommandLine, UsageError } from '../../src/cli/args.js';
import { EventGuard, viewOf } from '../../src/cli/guard.js';
import { Secrets } from '../../src/host/redact.js';
import { makeDirs, runCli } from '../fixtures/run-cli.js';

const plain = (lines: string[]) => lines.map((l) => stripEscapes(l).trimEnd());

test('tool summaries: a verb per builtin, k=v clamped to 32 characters otherwise, one line, ~195 characters', () => {
  assert.equal(toolSummary('shell_exec', '{"command":"ls -la"}'), 'executing shell command: ls -la');
  assert.equal(toolSummary('shell_exec', '{"command":"echo a\\n\\techo b"}'), 'executing shell command: echo a  echo b');
  assert.equal(toolSummary('read_file', '{"path":"src/a.ts","limit":5}'), 'reading file: src/a.ts');
  assert.equal(toolSummary('write_file', '{"path":"b.txt","content":"x"}'), 'writing file: b.txt');
  assert.equal(toolSummary('list_dir', '{}'), 'listing directory: .');
  assert.equal(toolSummary('bg_exec', '{"command":"make"}'), 'starting background command: make');
  assert.equal(toolSummary('weather', '{"city":"Paris","units":"metric"}'), 'weather: city=Paris units=metric');
  assert.equal(toolSummary('weather', `{"city":"${'x'.repeat(40)}"}`), `weather: city=${'x'.repeat(27)}...`);
  assert.equal(toolSummary('weather', '{}'), 'weather');
  assert.equal(toolSummary('weather', 'not json'), 'weather: not json');
  assert.equal(toolSummary('shell_exec', 'oops'), 'shell_exec: oops');
  const long = toolSummary('shell_exec', JSON.stringify({ command: 'y'.repeat(500) }));
  assert.equal(long.length, 195);
  assert.ok(long.endsWith('...'));
  assert.equal(clampLine('😀'.repeat(200), 10), `${'😀'.repeat(3)}...`, 'no half surrogate pair');
});

test("batch tallies count by kind, in the original's words", () => {
  const t = emptyRoundCounts();
  for (const n of ['shell_exec', 'read_file', 'read_file', 'write_file', 'weather', 'weather', 'weather']) countCall(t, n);
  assert.equal(tallyText(t), 'ran 1 command, read 2 files, wrote 1 file, called 3 tools');
  assert.equal(tallyText(emptyRoundCounts()), '');
});

test('batch tallies count only calls that ran; denied and cancelled ones are said apart', () => {
  const t = emptyRoundCounts();
  countCall(t, 'shell_exec');
  countCall(t, 'shell_exec', 'cancelled');
  countCall(t, 'shell_exec', 'cancelled');
  assert.equal(tallyText(t), 'ran 1 command, 2 cancelled');
  const w = emptyRoundCounts();
  countCall(w, 'write_file', 'denied');
  assert.equal(tallyText(w), '1 call denied');
  countCall(w, 'read_file', 'cancelled');
  countCall(w, 'nope', 'unknown_tool');
  assert.equal(tallyText(w), '1 call denied, 1 cancelled');
  countCall(w, 'write_file');
  assert.equal(tallyText(w), 'wrote 1 file, 1 denied, 1 cancelled');
});

const status = (o: Partial<StatusState> = {}): StatusState => ({
  provider: 'mock',
  model: 'mock-model',
  agent: 'test',
  connection: 'online',
  detail: null,
  busy: false,
  tick: 0,
  state: 'idle',
  batch: null,
  tokensPerSec: 0,
  ctxUsed: 0,
  ctxMax: 0,
  hints: '^R reasoning  ^O output ',
  linesBelow: 0,
  unicode: true,
  ...o,
});

test('reasoning (fast-check): drawn as it streams, it is the whole text wrapped at once, and a line wraps once', () => {
  const piece = fc.constantFrom('\n', '\n\n', 'word ', 'a longer stretch of thinking that wraps ', '\x1b[31mred\x1b[0m ', '日本語 ', '');
  const doc = fc.array(fc.tuple(fc.array(piece, { maxLength: 12 }), fc.boolean()), { minLength: 1, maxLength: 30 });
  check(300, fc.tuple(doc, fc.constantFrom(20, 37, 80)), ([steps, width]) => {
    const b = new ReasoningBlock({ showReasoning: true, expandOutput: false });
    let text = '';
    for (const [parts, draw] of steps) {
      for (const p of parts) {
        b.append(p);
        text += p;
      }
      if (draw) b.render(width);
    }
    // The whole text at once: newlines before any text and one at the end show nothing.
    const nl = text.lastIndexOf('\n');
    const done = text.slice(0, nl + 1);
    const tail = text.slice(nl + 1);
    const d = done.replace(/^\n+/, '').replace(/\n$/, '');
    const wrap = (t: string) => wrapText(paint(sanitize(t), THEME.reasoning), width);
    const want = [''].concat(d || done.trim() ? wrap(d) : []);
    if (tail) want.push(...wrap(want.length > 1 ? tail : tail.replace(/^\n+/, '')));
    assert.deepEqual(b.hasText ? b.render(width) : [], b.hasText ? want : [], JSON.stringify(text));
    return true;
  });
  // 2,000 lines, drawn after each: each complete line is wrapped once, the growing one again.
  const b = new ReasoningBlock({ showReasoning: true, expandOutput: false });
  const spy = b as unknown as { wrap(t: string, w: number): string[] };
  const wrap = spy.wrap.bind(b);
  let wrapped = 0;
  spy.wrap = (t, w) => {
    wrapped += t.length;
    return wrap(t, w);
  };
  let total = 0;
  for (let i = 0; i < 2000; i++) {
    const line = `step ${i}: weighing the options once more\n`;
    b.append(line.slice(0, 9));
    b.render(60);
    b.append(line.slice(9));
    b.render(60);
    total += line.length;
  }
  assert.ok(wrapped < 2 * total, `${wrapped} characters wrapped for ${total}`);
});

test('status bar: identity, connection, spinner, info priority, gauge, hints when they fit', () => {
  assert.equal(statusText(status(), 60).trimEnd(), ' clm [mock/mock-model:test] [online]    idle');
  assert.equal(statusText(status(), 100).length, 100);
  assert.ok(statusText(status(), 100).endsWith('^R reasoning  ^O output '));
  assert.ok(!statusText(status(), 50).includes('^R'), 'hints that do not fit are left out');
  assert.ok(statusText(status({ provider: undefined, agent: undefined }), 60).startsWith(' clm [mock-model] [online]'));
  assert.ok(statusText(status({ connection: 'offline', detail: 'HTTP 503' }), 80).includes('[offline: HTTP 503]'));
  assert.ok(statusText(status({ connection: 'offline' }), 80).includes('[offline]  '));
  assert.ok(statusText(status({ connection: 'connecting' }), 80).includes('[connecting]'));
  const busy = (tick: number) => statusText(status({ busy: true, tick, state: 'thinking' }), 80);
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((t) => busy(t).slice(38, 39)),
    ['|', '/', '-', '\\', '|'],
  );
  assert.equal(infoText({ state: 'rate_limited', tick: 0, batch: { completed: 1, total: 3 }, tokensPerSec: 9 }), 'waiting.');
  assert.equal(infoText({ state: 'rate_limited', tick: 4, batch: null, tokensPerSec: 0 }), 'waiting..');
  assert.equal(infoText({ state: 'rate_limited', tick: 8, batch: null, tokensPerSec: 0 }), 'waiting...');
  assert.equal(infoText({ state: 'calling_tool', tick: 0, batch: { completed: 1, total: 3 }, tokensPerSec: 9 }), 'tools 1/3');
  assert.equal(infoText({ state: 'complete', tick: 0, batch: null, tokensPerSec: 20 }), '20.0 tok/s');
  assert.equal(infoText({ state: 'cancelled', tick: 0, batch: null, tokensPerSec: 20 }), 'cancelled', 'a cancel says so over the speed');
  for (const [s, l] of [
    ['idle', 'idle'],
    ['thinking', 'thinking'],
    ['calling_tool', 'tool'],
    ['rate_limited', 'waiting.'],
    ['complete', 'done'],
    ['error', 'error'],
    ['cancelled', 'cancelled'],
  ] as const) {
    assert.equal(infoText({ state: s, tick: 0, batch: null, tokensPerSec: 0 }), l);
  }
  assert.equal(gauge(60, 100, true), '[██████░░░░] 60%');
  assert.equal(gauge(60, 100, false), '[######....] 60%');
  assert.equal(gauge(0, 100, true), '');
  assert.equal(gauge(50, 0, true), '');
  assert.equal(gauge(500, 100, true), '[██████████] 100%');
  assert.ok(statusText(status({ ctxUsed: 53, ctxMax: 100 }), 80).includes('idle           [█████░░░░░] 53%'));
  assert.ok(statusText(status({ linesBelow: 12 }), 100).endsWith('12 more below: End '));
  // Narrow: the lines below are still said, shorter, and the left side gives way for them.
  const mid = statusText(status({ linesBelow: 12 }), 64);
  assert.match(mid, /^ clm \[mock\/mock-model:test\] \[online\] {4}idle {10,}12 below $/);
  assert.equal(mid.length, 64);
  const narrow = statusText(status({ linesBelow: 12 }), 30);
  assert.equal(narrow.length, 30);
  assert.ok(narrow.endsWith(' 12 below ') && narrow.includes('…'), narrow);
  assert.ok(!statusText(status({ linesBelow: 0 }), 30).includes('below'));
  // Not counted yet (a long transcript laid out again after a resize): said without a number.
  assert.ok(statusText(status({ linesBelow: Number.POSITIVE_INFINITY }), 100).endsWith(' more below: End '));
  assert.ok(statusText(status({ linesBelow: Number.POSITIVE_INFINITY }), 64).endsWith(' more below '));
  assert.doesNotMatch(statusText(status({ linesBelow: Number.POSITIVE_INFINITY }), 100), /Infinity/);
});

test('prompt queue: in order, one turn each, drawn as you> … (queued), secrets masked', () => {
  const q = new PromptQueue((t) => t.replace('hunter2', '[REDACTED]'));
  assert.deepEqual(q.render(40), []);
  q.add('first');
  q.add('my password is hunter2\nsecond line');
  assert.deepEqual(plain(q.render(60)), ['', 'you> first  (queued)', 'you> my password is [REDACTED] \u23ce second line  (queued)']);
  assert.equal(q.next(), 'first');
  q.unshift('again');
  assert.equal(q.next(), 'again');
  assert.equal(q.next(), 'my password is hunter2\nsecond line');
  assert.equal(q.next(), null);
  assert.ok(q.isEmpty);
  q.add('x'.repeat(1_000_000));
  assert.ok(stripEscapes(q.render(30)[1]!).endsWith('…  (queued)'));
});

/** A desk over `rules` with the screen's asker; `ask` starts a call's permission check. */
function screenDesk(rules = '') {
  const log: string[] = [];
  let cancelled = 0;
  const engine = new PermissionEngine({ rules: parseRulesText(rules, 'test.rules'), cwd: tmpdir(), home: tmpdir() });
  const desk = new PermissionDesk({ engine, rulesFile: null });
  const asker = new ScreenAsker(() => desk, {
    answered: (q, e) => log.push(`${q.split('\n', 1)[0]} ${e}`),
    cancelTurn: () => {
      cancelled++;
    },
    changed: () => {},
    rows: () => 24,
  });
  desk.front = asker;
  const answers = new Map<string, boolean>();
  let n = 0;
  const open = new Set<AbortController>();
  const ask = async (name: string, args: unknown) => {
    const id = `c${++n}`;
    const c = new AbortController();
    open.add(c);
    void desk.hook({ id, name, args: JSON.stringify(args), gated: true }, c.signal).then((a) => {
      open.delete(c);
      answers.set(id, a.allow);
    });
    for (let i = 0; i < 500 && !answers.has(id) && (desk.active ? desk.waiting + 1 : 0) + answers.size < n; i++)
      await new Promise((r) => setTimeout(r, 5));
    return {
      id,
      abort: () => {
        open.delete(c);
        c.abort();
      },
    };
  };
  // The turn ends: the agent withdraws what is still asked, and the desk forgets it.
  const endTurn = () => {
    for (const c of open) c.abort();
    open.clear();
    desk.turnEnded();
  };
  // Every key a run of typing of its own, begun after the question showed.
  let keys = 0;
  const key = (ch: string) => {
    desk.press(desk.shownAt + 1e6 + keys++ * 1e4);
    return desk.key(deskKeyOf('', ch) ?? {});
  };
  return { desk, asker, ask, key, endTurn, answers, log, cancelled: () => cancelled };
}

test('the screen asks what the desk asks: one question at a time, the answers and their echoes, session rules, Esc, withdrawal', async () => {
  const { desk, asker: pq, ask, key, endTurn, answers, log, cancelled } = screenDesk('allow shell_exec(echo *)\n');
  const a = await ask('shell_exec', { command: 'echo a; ls' });
  const b = await ask('shell_exec', { command: 'ls -l' });
  const c = await ask('write_file', { path: 'x', content: 'y' });
  assert.deepEqual(plain(pq.render(80)), [
    '',
    'allow tool shell_exec: echo a; ls',
    '  allow  echo a  shell_exec(echo *)  test.rules:1',
    '  ask    ls      no rule (default)',
    '(y) once  (s) session  (a) always  (n) deny  (d) never  [esc = deny+cancel]',
    '(2 more waiting)',
  ]);
  assert.equal(key('x'), false);
  assert.ok(key('S'));
  assert.deepEqual(plain(pq.render(80)).at(-1), 'rule 1 of 1 (Enter keeps it, empty drops it, Esc goes back): shell_exec(ls *)');
  assert.ok(desk.key({ name: 'enter' }));
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(answers.get(a.id), true);
  assert.equal(answers.get(b.id), true, 'the queued call the rule covers');
  assert.deepEqual(plain(pq.render(80)).slice(1, 4), ['allow tool write_file: x', '--- /dev/null (a new file)', '+++ x (after the call)']);
  assert.ok(key('n'));
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(answers.get(c.id), false);
  assert.deepEqual(log, [
    'allow tool shell_exec: echo a; ls -> allowed for this session: allow shell_exec(ls *)',
    'allow tool shell_exec: ls -l -> allowed (by the rule just added)',
    'allow tool write_file: x -> denied',
  ]);
  const later = await ask('shell_exec', { command: 'ls -a' });
  assert.equal(answers.get(later.id), true, 'the session rule holds');
  assert.equal(desk.active, false);
  // Esc: deny all, cancel.
  const d = await ask('write_file', {});
  const e = await ask('read_file', { path: 'p' });
  assert.ok(desk.key({ name: 'escape' }));
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(cancelled(), 1);
  assert.deepEqual([answers.get(d.id), answers.get(e.id)], [false, false]);
  assert.equal(log.at(-1), 'allow tool write_file -> denied (cancelled)');
  // A withdrawn call leaves the queue.
  const f = await ask('read_file', { path: 'q' });
  assert.ok(desk.active);
  f.abort();
  assert.equal(desk.active, false);
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(answers.get(f.id), false, 'a withdrawn call is answered: denied');
  // A question that fits takes no scrolling keys.
  await ask('bg_exec', { command: 'make' });
  assert.equal(pq.scroll(1), false);
  endTurn();
  // A huge question keeps to half the screen, says where the window is, and scrolls to its end.
  await ask('list_x', { content: Array.from({ length: 10_000 }, (_, i) => `line ${i + 1}`).join('\n') });
  let lines = plain(pq.render(80));
  assert.ok(lines.length <= 1 + 12 + 1 + 1, String(lines.length));
  assert.equal(lines[1], 'allow tool list_x: line 1');
  assert.equal(lines.at(-2), '  lines 1–12 of 10000: PgDn for more');
  assert.equal(lines.at(-1), ANSWER_KEYS);
  assert.equal(pq.scroll(1), true);
  lines = plain(pq.render(80));
  assert.equal(lines[1], 'line 12', 'a page is the window less one line');
  assert.equal(lines.at(-2), '  lines 12–23 of 10000: PgUp/PgDn to scroll');
  for (let i = 0; i < 1000; i++) pq.scroll(1);
  lines = plain(pq.render(80));
  assert.equal(lines.at(-3), 'line 10000', 'the end');
  assert.equal(lines.at(-2), '  lines 9989–10000 of 10000: PgUp to go back');
  pq.scroll(-2000);
  assert.equal(plain(pq.render(80))[1], 'allow tool list_x: line 1');
  endTurn();
  assert.equal(desk.active, false);
  // A line of a megabyte: shown in windows all the same, to its last character.
  await ask('list_x', { content: `${'x'.repeat(1_000_000)}END` });
  assert.match(plain(pq.render(80))[1]!, /^allow tool list_x:/);
  let pages = 0;
  while (pq.scroll(1) && pages < 20_000 && !plain(pq.render(80)).some((l) => l.endsWith('END'))) pages++;
  assert.ok(
    plain(pq.render(80)).some((l) => l.endsWith('xEND')),
    'the end of the line',
  );
  endTurn();
  // 40 columns: the answer keys wrap at their groups, none lost.
  await ask('list_x', { a: 1 });
  await ask('list_x', { a: 2 });
  assert.deepEqual(plain(pq.render(40)), [
    '',
    'allow tool list_x: 1',
    '(y) once  (s) session  (a) always',
    '(n) deny  (d) never  [esc = deny+cancel]',
    '(1 more waiting)',
  ]);
  endTurn();
});

test('the answered question in the transcript: collapsed like a tool output, whole with ^O', () => {
  const settings = { showReasoning: false, expandOutput: false };
  const question = `allow tool write_file: path: x  content: ${Array.from({ length: 60 }, (_, i) => `l${i + 1}`).join('\n')}`;
  const block = new PermissionRecord(settings, question, '-> allowed');
  assert.deepEqual(plain(block.render(80)), [
    '',
    'allow tool write_file: path: x  content: l1',
    'l2',
    'l3',
    'l4',
    'l5',
    'l6',
    '  ... (+54 lines, ^O to expand)',
    '-> allowed',
  ]);
  settings.expandOutput = true;
  const all = plain(block.render(80));
  assert.equal(all.length, 1 + 60 + 1);
  assert.equal(all.at(-2), 'l60');
  const short = new PermissionRecord(settings, 'allow tool shell_exec: ls', '-> denied');
  settings.expandOutput = false;
  assert.deepEqual(plain(short.render(80)), ['', 'allow tool shell_exec: ls', '-> denied']);
});

test('the probe schedule: periodic, and a probe out of turn restarts the interval', () => {
  let probes = 0;
  const timers: { fn: () => void; ms: number; live: boolean }[] = [];
  const p = new ConnectionProbe(
    () => {
      probes++;
    },
    20_000,
    {
      setInterval: (fn, ms) => {
        const t = { fn, ms, live: true };
        timers.push(t);
        return t;
      },
      clearInterval: (h) => {
        (h as { live: boolean }).live = false;
      },
    },
  );
  p.now();
  assert.equal(probes, 1);
  assert.equal(timers.length, 0, 'no interval before start');
  p.start();
  assert.equal(timers[0]!.ms, 20_000);
  timers[0]!.fn();
  assert.equal(probes, 2);
  p.now();
  assert.equal(probes, 3);
  assert.equal(timers[0]!.live, false);
  assert.equal(timers[1]!.live, true, 'restarted');
  p.stop();
  assert.equal(timers[1]!.live, false);
});

test("frame pacing: a reply's first delta and the turn's end drawn at once, the rest paced", () => {
  const pacing = new FramePacing();
  const drawn = (types: AgentEvent['type'][]) => types.map((t) => (pacing.atOnce(t) ? 'now' : 'paced')).join(' ');
  // Enter, the request, the reply streamed: its first words at once, the rest paced.
  assert.equal(drawn(['turn_start', 'state', 'reasoning', 'reasoning', 'text', 'text']), 'paced paced now paced paced paced');
  // The reply's end and a batch of tools, paced; a running tool's first report at once.
  assert.equal(
    drawn(['finish', 'usage', 'message', 'tool_begin', 'tool_begin', 'tool_progress', 'tool_progress', 'tool_result']),
    'paced paced paced paced paced now paced paced',
  );
  // After a tool's result, the next reply's first words are news again; a notice mid-stream too.
  assert.equal(drawn(['state', 'text', 'text', 'notice', 'text', 'text']), 'paced now paced paced now paced');
  assert.equal(drawn(['usage', 'turn_done']), 'paced now');
  // A turn that ended on a delta (a cancel) does not hold back the next turn's first one.
  assert.equal(drawn(['text', 'text', 'turn_done']), 'now paced now');
  assert.equal(drawn(['turn_start', 'text']), 'paced now');
});

test('screen mode: --no-alt-screen, else a config that mentions ui waits for the config, else full screen', (t) => {
  const dirs = makeDirs('clm-ui-mode-');
  t.after(() => dirs.cleanup());
  const env = { XDG_CONFIG_HOME: dirs.config };
  assert.equal(modeBeforeConfig(true, env), 'inline');
  assert.equal(modeBeforeConfig(false, env), 'fullscreen');
  dirs.write('config.lua', 'return { model = "a/b" }');
  assert.equal(modeBeforeConfig(false, env), 'fullscreen');
  dirs.write('config.lua', '-- ui = "inline"\n--[[ ui = "inline" ]]\nreturn { model = "a/b", system_prompt = "use the ui -- carefully" }');
  assert.equal(modeBeforeConfig(false, env), null, 'a string that mentions ui counts (only loading the file tells)');
  dirs.write('config.lua', '-- ui = "inline"\n--[==[ ui\n]==]\nreturn { model = "a/b" } -- ui');
  assert.equal(modeBeforeConfig(false, env), 'fullscreen', 'comments do not count');
  assert.equal(withoutLuaComments('a = "x--y" -- c\nb = [[--]] --[[ d ]] e'), 'a = "x--y" \nb = [[--]]  e');
  // Escaped quotes, a level-2 long string holding ]], a quote left open at the line's end, and
  // comments left open to the end of the file.
  assert.equal(withoutLuaComments("s = 'it\\'s -- no' -- yes\nt = [==[ ]] -- ]==] u"), "s = 'it\\'s -- no' \nt = [==[ ]] -- ]==] u");
  assert.equal(withoutLuaComments('s = "open -- ui\nv = 1 -- c'), 's = "open -- ui\nv = 1 ');
  assert.equal(withoutLuaComments('x = 1 --[[ ui never closed'), 'x = 1 ');
  assert.equal(withoutLuaComments('x = [[ ui -- never closed'), 'x = [[ ui -- never closed');
  mkdirSync(join(dirs.clm, 'agents'), { recursive: true });
  writeFileSync(join(dirs.clm, 'agents', 'x.lua'), 'return { ui = "inline" }');
  assert.equal(modeBeforeConfig(false, env), null);
  assert.equal(modeOf(false, 'inline'), 'inline');
  assert.equal(modeOf(true, 'fullscreen'), 'inline');
  assert.equal(modeOf(false, undefined), 'fullscreen');
});

test("a listing's rows wrap under their last cell, an indented line under its indent, prose from the edge", { timeout: 10_000 }, () => {
  const text = [
    'tools (2 offered to the model):',
    '  read_file   builtin                allow (default: the tool has no side effects)',
    '  edit_file   plugin edit_file.lua   ask (default); some calls: deny edit_file(.git/**), allow edit_file(src/**)',
    '  a line of the listing that is only indented and much longer than the screen is wide',
    'prose of a notice that is much longer than the screen is wide goes on at the left edge',
  ].join('\n');
  assert.deepEqual(plain(noticeBlock(text).render(70)), [
    '',
    'tools (2 offered to the model):',
    '  read_file   builtin                allow (default: the tool has no',
    '                                     side effects)',
    '  edit_file   plugin edit_file.lua   ask (default); some calls: deny',
    '                                     edit_file(.git/**), allow',
    '                                     edit_file(src/**)',
    '  a line of the listing that is only indented and much longer than the',
    '  screen is wide',
    'prose of a notice that is much longer than the screen is wide goes on',
    'at the left edge',
  ]);
  // Too narrow for the last cell's column: four columns in from the row's indent.
  assert.deepEqual(plain(errorBlock('  read_file   builtin   allow (default: no side effects)').render(30)), [
    '',
    '  read_file   builtin   allow',
    '      (default: no side',
    '      effects)',
  ]);
  // Every row fits: as it was given.
  assert.deepEqual(plain(noticeBlock('  a  b\n  cc  d').render(60)), ['', '  a  b', '  cc  d']);
});

test('/tools names a plugin under the home directory with ~, a seed plugin (clm ships it) by its file name', { timeout: 10_000 }, () => {
  const places = { home: '/home/u', seedDir: '/usr/lib/node_modules/clm/plugins' };
  assert.equal(originText(undefined, places), 'builtin');
  assert.equal(originText({ kind: 'mcp', server: 'gh' }, places), 'mcp server gh');
  assert.equal(originText({ kind: 'plugin' }, places), 'plugin');
  assert.equal(
    originText({ kind: 'plugin', file: '/usr/lib/node_modules/clm/plugins/edit_file.lua' }, places),
    'seed plugin edit_file.lua',
  );
  assert.equal(originText({ kind: 'plugin', file: '/home/u/.config/clm/plugins/x.lua' }, places), 'plugin ~/.config/clm/plugins/x.lua');
  assert.equal(originText({ kind: 'plugin', file: '/home/user2/x.lua' }, places), 'plugin /home/user2/x.lua');
  assert.equal(originText({ kind: 'plugin', file: '/srv/p/x.lua' }, { seedDir: null }), 'plugin /srv/p/x.lua');
});

test('the echo of a prompt keeps to 40 lines and 8,000 characters and says how much more', () => {
  const long = Array.from({ length: 100 }, (_, i) => `l${i}`).join('\n');
  const lines = plain(userEcho(long).render(80));
  assert.equal(lines.length, 1 + ECHO_MAX_LINES + 1);
  assert.equal(lines.at(-1), '     (+60 more lines)');
  assert.ok(
    plain(userEcho('w '.repeat(10_000)).render(80))
      .at(-1)!
      .endsWith('(+12000 more characters)'),
  );
  assert.deepEqual(headLines('a\nb\nc', 2), { lines: ['a', 'b'], more: 1 });
  assert.deepEqual(headLines('a\nb', 2), { lines: ['a', 'b'], more: 0 });
  // A paste ending in a newline has no empty last line to count.
  assert.deepEqual(headLines('a\nb\n', 2), { lines: ['a', 'b'], more: 0 });
  assert.deepEqual(headLines('a\nb\nc\nd\n', 2), { lines: ['a', 'b'], more: 2 });
  assert.deepEqual(headLines('a\nb\n\n', 2), { lines: ['a', 'b'], more: 1 });
  const pasted = `${Array.from({ length: 5000 }, (_, i) => `paste line ${i + 1}`).join('\n')}\n`;
  assert.equal(plain(userEcho(pasted).render(80)).at(-1), '     (+4960 more lines)');
});

// ---- the transcript the events make ----------------------------------------------------------

function view(o: { folding?: boolean; secrets?: string[] } = {}) {
  const secrets = new Secrets(o.secrets ?? []);
  const transcript = new Transcript();
  const settings = { showReasoning: false, expandOutput: false };
  const v = new TranscriptView(
    { transcript, changed: () => {} },
    settings,
    { unicode: true, hyperlinks: false },
    secrets,
    () => o.folding ?? true,
  );
  const shown = (w = 80) => plain(transcript.lines(w, 0, transcript.lineCount(w)));
  // Events as the runtime hands them to the UI: through the run's guard, in the screen's view.
  const guard = new EventGuard(secrets);
  const ev = (...es: AgentEvent[]) => {
    for (const e of es) for (const m of guard.pass(e)) v.event(viewOf(m, 'screen') as AgentEvent);
  };
  return { v, settings, shown, ev, transcript };
}

const batch = (id: string, name: string, args: object, content: string, outcome: 'ok' | 'failed' | 'timedout' = 'ok'): AgentEvent[] => [
  { type: 'tool_batch', completed: 0, total: 1 },
  { type: 'tool_begin', id, name, args: JSON.stringify(args) },
  { type: 'tool_result', id, name, content, outcome },
  { type: 'tool_batch', completed: 1, total: 1 },
];
const seq = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => String(a + i)).join('\n');

test('transcript: echo, the clm> label once per turn, tool lines, 6 lines of the latest output, older ones counted', () => {
  const { v, shown, ev } = view();
  v.echo('list it');
  ev({ type: 'turn_start', origin: 'submit', prompt: 'list it' }, { type: 'text', text: 'Sure.' });
  ev(...batch('1', 'shell_exec', { command: 'seq 1 10' }, seq(1, 10)));
  ev({ type: 'text', text: 'Done.' }, { type: 'turn_done', status: 0 });
  assert.deepEqual(shown(), [
    '',
    'you> list it',
    '',
    'clm>',
    'Sure.',
    '',
    '  executing shell command: seq 1 10',
    '    1',
    '    2',
    '    3',
    '    4',
    '    5',
    '    6',
    '  ... (+4 lines, ^O to expand)',
    '  -- ran 1 command',
    '',
    'Done.',
  ]);
});

test('transcript: a newer batch folds the older ones into one line per run; hidden reasoning does not break a run; ^O and ^R', () => {
  const { v, settings, shown, ev } = view();
  ev({ type: 'turn_start', origin: 'submit', prompt: 'go' });
  ev(...batch('1', 'shell_exec', { command: 'a' }, 'out a'));
  ev({ type: 'reasoning', text: 'thinking about b' });
  ev(...batch('2', 'read_file', { path: 'b' }, 'out b'));
  ev(...batch('3', 'write_file', { path: 'c', content: '' }, 'wrote c'));
  let s = shown();
  assert.deepEqual(s, ['', '  -- ran 1 command, read 1 file (^O to expand)', '', '  writing file: c', '    wrote c', '  -- wrote 1 file']);
  settings.showReasoning = true;
  v.settingsChanged();
  s = shown();
  assert.deepEqual(s, [
    '',
    '  -- ran 1 command (^O to expand)',
    '',
    'thinking about b',
    '',
    '  -- read 1 file (^O to expand)',
    '',
    '  writing file: c',
    '    wrote c',
    '  -- wrote 1 file',
  ]);
  settings.showReasoning = false;
  settings.expandOutput = true;
  v.settingsChanged();
  s = shown();
  assert.ok(s.includes('  executing shell command: a') && s.includes('    out a') && s.includes('  reading file: b'), s.join('\n'));
  ev({ type: 'turn_done', status: 0 });
});

test('transcript inline (no folding): nothing folds, finished blocks are final', () => {
  const { shown, ev, transcript } = view({ folding: false });
  ev({ type: 'turn_start', origin: 'submit', prompt: 'go' });
  ev(...batch('1', 'shell_exec', { command: 'a' }, 'out a'));
  ev(...batch('2', 'shell_exec', { command: 'b' }, 'out b'));
  assert.ok(shown().includes('  executing shell command: a'));
  for (let i = 0; i < transcript.length; i++) assert.equal(transcript.blockAt(i).final, true, `block ${i}`);
});

test('transcript: failures, timeouts, finish notes, cancel, errors, notices, compaction, secrets', () => {
  const { v, shown, ev, settings } = view({ secrets: ['sk-TOPSECRET'] });
  ev({ type: 'turn_start', origin: 'submit', prompt: 'x' });
  ev(...batch('1', 'read_file', { path: 'nope' }, '[tool failed: no such file]', 'failed'));
  assert.ok(shown().includes('[x read_file] [tool failed: no such file]'), shown().join('\n'));
  ev(...batch('2', 'shell_exec', { command: 'sleep 9' }, '[tool failed: timed out]', 'timedout'));
  assert.ok(shown().includes('[timeout shell_exec] [tool failed: timed out]'), shown().join('\n'));
  ev({ type: 'text', text: 'the key is sk-TOP' }, { type: 'text', text: 'SECRET ok' }, { type: 'finish', reason: 'length' });
  ev({ type: 'turn_done', status: -5, error: 'HTTP 500: sk-TOPSECRET leaked' });
  ev({ type: 'notice', text: 'model does not support tool calls; continuing without tools' });
  ev({ type: 'turn_start', origin: 'submit', prompt: 'y' }, { type: 'turn_done', status: -125 });
  ev({ type: 'turn_start', origin: 'autocompact' }, { type: 'compaction', kind: 'end_of_turn', phase: 'started' });
  ev({
    type: 'compaction',
    kind: 'end_of_turn',
    phase: 'succeeded',
    record: { index: 0, count: 4, summary: 'They spoke.\nOf keys.' },
    messagesBefore: 6,
    messagesAfter: 3,
    tokensBefore: 400,
    tokensAfter: 90,
  });
  ev({ type: 'notice', text: 'compacted 4 messages into a summary: 6 → 3 messages, ~400 → ~90 tokens' }, { type: 'turn_done', status: 0 });
  const s = shown();
  for (const want of [
    'the key is [REDACTED] ok',
    '[truncated: hit token limit]',
    'error: HTTP 500: [REDACTED] leaked',
    '[model does not support tool calls; continuing without tools]',
    '[cancelled]',
    '[compacting the conversation...]',
    '[compacted 4 messages into a summary: 6 → 3 messages, ~400 → ~90 tokens]',
    '  ... (summary: 2 lines, ^O to expand)',
  ])
    assert.ok(s.includes(want), `${want}\n${s.join('\n')}`);
  assert.equal(s.filter((l) => l.startsWith('[compacted')).length, 1, "the agent's notice is not shown twice");
  assert.ok(!s.join('\n').includes('TOPSECRET'));
  settings.expandOutput = true;
  v.settingsChanged();
  assert.ok(shown().includes('    Of keys.'));
});

test('transcript: a resumed conversation is replayed as it went', () => {
  const { v, shown } = view();
  v.replay([
    { role: 'user', content: '[context update] current time: x' },
    { role: 'user', content: 'files?' },
    {
      role: 'assistant',
      content: null,
      toolCalls: [
        { id: 't1', name: 'shell_exec', args: '{"command":"ls"}' },
        { id: 't2', name: 'read_file', args: '{"path":"a"}' },
      ],
    },
    { role: 'tool', content: 'a\nb', toolCallId: 't1', toolName: 'shell_exec' },
    { role: 'tool', content: '[tool failed: nope]', toolCallId: 't2', toolName: 'read_file' },
    { role: 'assistant', content: 'Two **files**.' },
  ]);
  assert.deepEqual(shown(), [
    '',
    'you> files?',
    '',
    '  executing shell command: ls',
    '  reading file: a',
    '  ... (2 lines, ^O to expand)',
    '[x read_file] [tool failed: nope]',
    '  -- ran 1 command, read 1 file',
    '',
    'clm>',
    'Two files.',
  ]);
});

test('-f and --no-alt-screen: parsed; -f with -o or -H, or without a terminal, is a usage error', async (t) => {
  assert.equal(parseCommandLine(['-f', 'go on']).forever, 'go on');
  assert.equal(parseCommandLine(['--forever=again']).forever, 'again');
  assert.equal(parseCommandLine(['--no-alt-screen']).noAltScreen, true);
  assert.equal(parseCommandLine([]).noAltScreen, false);
  assert.throws(
    () => parseCommandLine(['-f', 'x', '-o', 'y']),
    (e: unknown) => e instanceof UsageError && e.message === '-f/--forever needs the interactive UI (not -o or -H)',
  );
  assert.throws(() => parseCommandLine(['-Hf', 'x']), UsageError);
  const dirs = makeDirs('clm-ui-args-');
  t.after(() => dirs.cleanup());
  const r = await runCli(['-u', 'http://127.0.0.1:1/v1', '-p', dirs.empty, '-f', 'x'], { dirs, input: '' });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^clm: -f\/--forever needs the interactive UI \(stdin and stdout a terminal\)$/m);
});

test('nextTask: background jobs take turns, one step per task, and what came meanwhile runs between the steps', {
  timeout: 10_000,
}, async () => {
  const order: string[] = [];
  // An I/O callback stands for a key: queued by each step, it must run before the next step.
  const job = async (name: string) => {
    for (let i = 0; i < 3; i++) {
      await nextTask();
      order.push(`${name}${i}`);
      setImmediate(() => order.push('io'));
    }
  };
  await Promise.all([job('a'), job('b'), job('c')]);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['a0', 'io', 'b0', 'io', 'c0', 'io', 'a1', 'io', 'b1', 'io', 'c1', 'io', 'a2', 'io', 'b2', 'io', 'c2', 'io']);
});

test('search goes through the blocks from the end up, a block a task here: the nearest match is shown first, then the count is completed', {
  timeout: 60_000,
}, async () => {
  const vt = new VirtualTerminal(60, 12);
  const r = new Renderer(vt, { mode: 'fullscreen' });
  await r.start();
  for (let i = 0; i < 200; i++)
    r.transcript.add(Object.assign(new TextBlock(i % 50 === 7 ? `a needle ${i}` : `hay ${i}`), { final: true }));
  r.layOut();
  r.renderNow();
  // A resize: nothing is laid out at the new width.
  vt.resize(50, 12);
  r.renderNow();
  const statuses: string[] = [];
  const search = new TranscriptSearch(
    () => r,
    () => 50,
    () => {
      const line = stripEscapes(search.render(50)[0] ?? '');
      statuses.push(line);
    },
    0,
  );
  const key = (name: string) => ({ type: 'key' as const, key: { name, ctrl: false, alt: false, shift: false, meta: false, sequence: '' } });
  search.start();
  search.key({ type: 'text', text: 'needle' });
  search.key(key('enter'));
  assert.match(stripEscapes(search.render(50)[0]!), /searching… \(Esc close\)/, 'the first block searched holds none');
  for (let i = 0; i < 500 && !statuses.at(-1)?.includes('4/4 (n up'); i++) await nextTask();
  const counted = statuses.filter((l) => /\d\//.test(l));
  assert.match(counted[0]!, /search: needle {2}1\/1… \(n up/, 'the nearest match first, the count still going');
  assert.match(counted.at(-1)!, /4\/4 \(n up/, statuses.join('\n'));
  assert.ok(
    counted.some((l) => l.includes('3/3…')),
    'the count grows as the search goes up',
  );
  r.renderNow();
  await vt.flush();
  assert.ok(
    vt.viewport().some((l) => l.includes('a needle 157')),
    vt.viewport().join('\n'),
  );
  // n goes up to the next older one.
  search.key({ type: 'text', text: 'n' });
  r.renderNow();
  await vt.flush();
  assert.ok(
    vt.viewport().some((l) => l.includes('a needle 107')),
    vt.viewport().join('\n'),
  );
  assert.match(stripEscapes(search.render(50)[0]!), /3\/4 \(n up/);
  // A new search stops the one going on: its matches are not mixed in.
  search.start();
  search.key({ type: 'text', text: 'hay 19' });
  search.key(key('enter'));
  search.start();
  search.key({ type: 'text', text: 'needle 7' });
  search.key(key('enter'));
  for (let i = 0; i < 500 && !/\/\d+ \(n up/.test(stripEscapes(search.render(50)[0]!)); i++) await nextTask();
  for (let i = 0; i < 300; i++) await nextTask();
  assert.match(stripEscapes(search.render(50)[0]!), /search: needle 7 {2}1\/1 \(n up/);
  r.stop();
});
