// The interactive screen of clm: the runtime's events drawn as a transcript above a status bar
// and an input box, keys bound by the table in key-bindings.ts (the original's keys and today's
// agent CLIs'), slash commands and completion through the CommandContext seam, permission
// questions, prompts queued while a turn runs, the connection probe schedule, -f/--forever,
// -r/--resume with the transcript replayed.
//
// The first frame is drawn before the configuration is loaded when the screen mode is known
// without it; start-up (plugins, MCP servers) goes on behind a usable screen, and prompts typed
// meanwhile wait for it. However the program ends — /quit, Ctrl-C, Ctrl-D, SIGTERM, SIGHUP, a
// crash — the terminal is restored exactly, then `session: <id> (resume with clm -r <id>)` is
// printed (an empty session is deleted).

import { writeSync } from 'node:fs';
import { ClmError, EAGAIN, ECANCELED, statusName } from '../../core/errors.js';
import type { AgentEvent, TurnOrigin } from '../../core/events.js';
import type { AgentState, Message } from '../../core/types.js';
import type { UiMode } from '../../config/types.js';
import { Secrets } from '../../host/redact.js';
// What the first frame needs is imported here; the transcript's blocks (markdown with its
// lexer) load right after it is on screen.
import { isUnicodeLocale, supportsHyperlinks } from '../../tui/capabilities.js';
import { loadEmoji, shortcodeBefore } from '../../tui/emoji.js';
import { onHighlighterReady } from '../../tui/highlight.js';
import { type InputEvent, keyId } from '../../tui/keys.js';
import { Renderer } from '../../tui/renderer.js';
import { NodeTerminal } from '../../tui/terminal.js';
import { Transcript } from '../../tui/transcript.js';
import type { CliArgs } from '../args.js';
import { onProcessExit } from '../exit-hooks.js';
import type { ResolvedRun } from '../resolve-run.js';
import type { RunEvent, Runtime } from '../runtime.js';
import { isRuntimeEvent } from '../runtime-events.js';
import { sessionLine, type SessionOutcome } from '../session-log.js';
import { turnError } from '../turn-error.js';
import { onInterrupt, onTerminate } from '../signal-handlers.js';
import { bannerBlock } from './banner.js';
import type { ViewSettings } from './blocks.js';
import type { CommandContext, CompletionResult } from './command-context.js';
import { runCommand } from './commands.js';
import { complete } from './completion.js';
import { CompletionList } from './completion-list.js';
import { ConnectionProbe } from './connection-probe.js';
import { FramePacing } from './frame-pacing.js';
import { InputBox } from './input-box.js';
import { boundAction, type KeyAction, type KeyCondition, type KeyMode } from './key-bindings.js';
import { deskKeyOf, ScreenAsker } from './permission-asker.js';
import { PromptQueue } from './prompt-queue.js';
import { pickSession } from '../resume-picker.js';
import { takeOverIfAsked } from '../session-takeover.js';
import { QuestionBox } from './question.js';
import { modeBeforeConfig, modeOf } from './screen-mode.js';
import { type ConnectionView, statusLine } from './status-bar.js';
import type { TranscriptView } from './transcript-view.js';
import { TranscriptSearch } from './transcript-search.js';
import { nextTask } from '../../tui/next-task.js';
import { monotonicMs } from '../../host/monotonic.js';
import { startIsDone } from '../code-cache.js';

const SPINNER_MS = 100;
/** Streamed content is drawn at most this often (the original's repaint tick); keys and news at once (frame-pacing.ts). */
const FRAME_MS = 80;
/** How long a slice of a resumed conversation's replay (its messages and their lay-out) runs before keys are read again. */
const REPLAY_SLICE_MS = 8;
/** How long a replay, inline, waits for the colours of a block's code before writing it plain. */
const COLOURS_WAIT_MS = 5_000;
const HINTS_FULLSCREEN = '^R reasoning  ^O output  ^L redraw  PgUp/PgDn/End scroll ';
const HINTS_INLINE = '^R reasoning  ^O output  ^L redraw ';
const WHEEL_ROWS = 3;

export interface UiOptions {
  env?: NodeJS.ProcessEnv;
}

/** Run the interactive UI until the person leaves; the exit status. */
export async function runUi(args: CliArgs, o: UiOptions = {}): Promise<number> {
  const env = o.env ?? process.env;
  let resumeId = args.resume || undefined;
  if (args.resume === '') resumeId = await pickSession({ stdin: process.stdin, stdout: process.stdout }, env);
  // A fork only reads the session: whoever has it open may go on with it.
  if (resumeId && !args.fork) await takeOverIfAsked(resumeId, process, env);
  return new UiApp(args, env, resumeId).run();
}

class UiApp {
  private readonly term = new NodeTerminal();
  private readonly transcript = new Transcript();
  private screen: Renderer | null = null;
  private started: Promise<void> | null = null;
  private mode: UiMode = 'fullscreen';
  private readonly settings: ViewSettings = { showReasoning: false, expandOutput: false };
  /** The person toggled a setting before config.lua was read: its default does not override that. */
  private settingsTouched = false;
  /** The run's secrets (the runtime fills the list): masked in the UI's own text too. */
  private readonly secrets = new Secrets();
  /** The transcript's view, once its module has loaded (after the first frame); until then what is for it waits. */
  private view: TranscriptView | null = null;
  private readonly forView: ((v: TranscriptView) => void)[] = [];
  /** A resumed conversation is being put on screen: what the run says waits in forView. */
  private replaying = false;
  private viewLoaded: Promise<void> | null = null;
  private readonly input: InputBox;
  private readonly completions: CompletionList;
  private readonly queue: PromptQueue;
  private readonly search: TranscriptSearch;
  private readonly perms: ScreenAsker;
  private readonly question: QuestionBox;
  private readonly probe: ConnectionProbe;
  private rt: Runtime | null = null;
  private creating: Promise<Runtime> | null = null;
  private ready = false;
  private quitting = false;
  private exitCode = 0;
  private finished!: (code: number) => void;
  private readonly done = new Promise<number>((r) => {
    this.finished = r;
  });
  private sessionPrinted = false;

  // What the status bar shows.
  private connection: ConnectionView = 'connecting';
  private connDetail: string | null = null;
  private state: AgentState = 'idle';
  /** The last turn was cancelled (the agent's state then says complete). */
  private cancelled = false;
  private busy = false;
  private tick = 0;
  private spinner: NodeJS.Timeout | null = null;
  /** When the screen last showed streamed output (the spinner rests while it flows). */
  private shownAt = Number.NEGATIVE_INFINITY;
  /** The markdown warm-up after the first frame, once done. */
  private warmedUp: Promise<void> = Promise.resolve();
  /** Which events are drawn at once and which wait for the next paced frame. */
  private readonly pacing = new FramePacing();
  private batch: { completed: number; total: number } | null = null;
  private tokensPerSec = 0;
  /** The sandbox mode in force, once the runtime knows it. */
  private sandboxMode: string | undefined;

  /** -f: the prompt sent again after every turn that ends ok or cancelled (until Ctrl-C or a failed turn). */
  private forever: string | null;
  private turnOrigin: TurnOrigin = 'submit';
  /** How the last turn ended (null before the first). */
  private lastEnd: TurnEnd | null = null;
  private completionGen = 0;
  private readonly ctx: CommandContext;
  private readonly unicode: boolean;
  /** When the first frame was on screen, ms after the process started (for the debug log). */
  private firstFrameMs: number | undefined;

  constructor(
    private readonly args: CliArgs,
    private readonly env: NodeJS.ProcessEnv,
    private readonly resumeId: string | undefined,
  ) {
    this.forever = args.forever ?? null;
    this.unicode = isUnicodeLocale(env);
    const rows = () => this.term.rows;
    this.input = new InputBox(rows);
    this.completions = new CompletionList(rows);
    this.queue = new PromptQueue((s) => this.secrets.mask(s));
    this.search = new TranscriptSearch(
      () => this.screen,
      () => this.term.columns,
      () => this.render(true),
    );
    this.perms = new ScreenAsker(() => this.rt?.desk ?? null, {
      answered: (q, echo) => this.withView((v) => v.permissionAnswered(q, echo)),
      cancelTurn: () => this.cancelTurn(),
      changed: () => this.render(true),
      rows,
    });
    this.question = new QuestionBox({
      changed: () => this.render(true),
      answered: (q, echo) => this.withView((v) => v.permissionAnswered(q, echo)),
    });
    this.probe = new ConnectionProbe(() => {
      void this.rt?.agent.checkConnection().catch(() => {});
    });
    const self = this;
    this.ctx = {
      get runtime() {
        return self.rt!;
      },
      busy: () => !!self.rt?.agent.busy,
      print: (text, kind) => this.withView((v) => v.print(text, kind)),
      clearTranscript: () => {
        this.withView((v) => v.clear());
        this.screen?.scrollToBottom();
      },
      settings: this.settings,
      settingsChanged: () => {
        this.settingsTouched = true;
        this.withView((v) => v.settingsChanged());
      },
      probeConnection: () => this.probe.now(),
      quit: () => this.quit(),
      ask: (question, answers) => this.question.ask(question, answers),
      replay: (messages) => {
        this.withView((v) => {
          v.clear();
          void this.replay(v, messages);
        });
        this.screen?.scrollToBottom();
      },
    };
  }

  /** Load the transcript's view; what waited for it happens then. */
  private loadView(): Promise<void> {
    this.viewLoaded ??= nextTask().then(async () => {
      const { TranscriptView } = await import('./transcript-view.js');
      const host = { transcript: this.transcript, changed: () => this.render() };
      const md = { unicode: isUnicodeLocale(this.env), hyperlinks: supportsHyperlinks(this.env) };
      const view = new TranscriptView(host, this.settings, md, this.secrets, () => this.mode === 'fullscreen');
      this.view = view;
      for (const fn of this.forView.splice(0)) this.guard(() => fn(view));
      this.render();
    });
    return this.viewLoaded;
  }

  /**
   * The runtime's code (the agent, HTTP, the sandbox, sessions): loaded after the first frame when
   * the screen mode is known without the config, so that frame waits for none of it.
   */
  private async runtimeModule(): Promise<typeof import('../runtime.js')> {
    await this.started;
    await nextTask();
    return import('../runtime.js');
  }

  private withView(fn: (v: TranscriptView) => void): void {
    if (this.view && !this.replaying) fn(this.view);
    else this.forView.push(fn);
  }

  /**
   * A conversation into the transcript (a resumed one, or what /undo and /rewind leave), a slice
   * at a time: thousands of lines of markdown take a second to lay out, and keys typed meanwhile
   * are drawn between the slices. What the run says in the meantime is shown after it.
   */
  private async replay(view: TranscriptView, messages: readonly Message[], resumedId?: string): Promise<void> {
    this.replaying = true;
    this.rt?.host.log?.(`ui: replaying ${messages.length} messages${resumedId ? ` of session ${resumedId}` : ''}`);
    try {
      const steps = view.replaySteps(messages);
      // Inline, what goes into the scrollback stays as written: a block whose code waits for its
      // colours (the highlighter thread's) is the last one until they come.
      const awaitsColours = () => this.mode === 'inline' && this.screen?.lastAwaitsColours() === true;
      for (;;) {
        await nextTask();
        // Each message laid out as it is added, its time in the slice: a message with a long
        // block of code takes milliseconds to lay out, and a slice's worth of them would hold keys.
        const done = slice(steps, REPLAY_SLICE_MS, () => {
          this.screen?.layOut();
          return awaitsColours();
        });
        if (this.quitting) break;
        if (awaitsColours()) await this.coloursOfLast(awaitsColours);
        if (done) break;
      }
      if (resumedId) view.print(`[resumed session ${resumedId}]`, 'notice');
    } catch (e) {
      // A fault in the screen's own code, as guard() shows one: the session goes on.
      view.print(`internal error: ${(e as Error)?.message ?? String(e)}`, 'error');
    } finally {
      this.replaying = false;
      for (const fn of this.forView.splice(0)) this.guard(() => fn(view));
      this.render(true);
    }
  }

  /** Until `waits()` is false after a highlighter's notice, or COLOURS_WAIT_MS, or the end of the UI. */
  private coloursOfLast(waits: () => boolean): Promise<void> {
    this.render();
    return new Promise((resolve) => {
      const end = () => {
        off();
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(end, COLOURS_WAIT_MS);
      // Registered after the UI's own listener, which marks the waiting blocks to be laid out again.
      const off = onHighlighterReady(() => {
        if (!waits()) end();
      });
      void this.done.then(end);
    });
  }

  // ---- life cycle --------------------------------------------------------------------------

  async run(): Promise<number> {
    const early = modeBeforeConfig(this.args.noAltScreen, this.env);
    this.transcript.add(bannerBlock());
    this.term.onInput((ev) => this.guard(() => this.onInput(ev)));
    // However the process ends from here on, the terminal comes back and the session is closed.
    const offExit = onProcessExit(() => this.exitNow());
    onInterrupt(() => this.guard(() => this.interrupt()));
    onTerminate((_sig, code) => this.quit(code));
    if (early) this.startScreen(early);
    const viewLoaded = this.loadView();
    try {
      this.creating = this.runtimeModule().then(({ createRuntime }) =>
        createRuntime({
          args: this.args,
          env: this.env,
          resumeId: this.resumeId,
          autocompactAtTurnEnd: true,
          onEvent: (e) => this.guard(() => this.event(e)),
          view: 'screen',
          secrets: this.secrets,
          asker: this.perms,
          onResolved: (r) => this.resolved(r, early),
          startsDeferred: true,
          pause: nextTask,
        }),
      );
      this.rt = await this.creating;
    } catch (e) {
      onInterrupt(null);
      onTerminate(null);
      offExit();
      this.screen?.stop();
      this.term.restore();
      throw e;
    }
    await this.started;
    // The first frame is on screen: the sandbox check and the connection probe may start.
    this.rt.startDeferred();
    await viewLoaded;
    const rt = this.rt;
    if (this.quitting) {
      const code = await this.done;
      offExit();
      return code;
    }
    const instructions = rt.instructions?.summary();
    if (instructions) this.withView((v) => v.print(`[instructions: ${instructions}]`, 'notice'));
    const replayed = rt.resumed && this.view ? this.replay(this.view, rt.resumed.transcript, rt.resumed.id) : Promise.resolve();
    this.render(true);
    // Prompts typed meanwhile are sent once the resumed conversation is on screen.
    void Promise.all([rt.ready, replayed]).then(
      () => this.onReady(),
      (e: unknown) =>
        this.withView((v) => v.print(`error: start-up failed: ${this.secrets.mask((e as Error)?.message ?? String(e))}`, 'error')),
    );
    const code = await this.done;
    offExit();
    return code;
  }

  /** The configuration is known: the status bar's identity, the settings' defaults, the screen. */
  private resolved(run: ResolvedRun, early: UiMode | null): void {
    if (!this.settingsTouched) {
      this.settings.showReasoning = run.showThinking;
      this.settings.expandOutput = run.expandOutput;
    }
    const mode = modeOf(this.args.noAltScreen, run.ui);
    if (!this.screen) this.startScreen(mode);
    else if (early && mode !== this.mode) {
      // The key was made by code (no file mentions it): start again in the configured mode.
      const prev = this.started;
      this.started = (async () => {
        await prev;
        this.screen?.stop();
        this.screen = null;
        this.startScreen(mode);
        await this.started;
      })();
    }
    this.render();
  }

  private startScreen(mode: UiMode): void {
    this.mode = mode;
    // NO_COLOR (no-color.org): set and not empty, no colours.
    const color = !process.env.NO_COLOR;
    const screen = new Renderer(this.term, { mode, transcript: this.transcript, frameMs: FRAME_MS, color });
    screen.setFooter([
      this.completions,
      this.queue,
      this.perms,
      this.question,
      this.search,
      { render: (w: number) => [this.statusBar(w)] },
      this.input,
    ]);
    this.screen = screen;
    this.started = screen.start().then(() => {
      this.firstFrameMs ??= process.uptime() * 1000;
      // First-use costs after the first frame, not before it: the emoji table, then markdown's
      // (~45 ms in all) a step of a few milliseconds at a time, so a key typed meanwhile waits
      // for one step, not for all of them.
      setTimeout(() => void loadEmoji().catch(() => {}), 0).unref();
      this.warmedUp = import('../../tui/markdown.js').then(
        (m) => stepByStep(m.markdownWarmUpSteps()),
        () => {},
      );
      onHighlighterReady(() => {
        this.transcript.changedWhere((b) => b.awaitsHighlighter?.() === true);
        this.render();
      });
    });
  }

  private onReady(): void {
    if (this.quitting || !this.rt) return;
    this.ready = true;
    if (this.firstFrameMs !== undefined) this.rt.host.log?.(`ui first frame: ${this.firstFrameMs.toFixed(1)} ms after the process started`);
    this.probe.start();
    if (this.forever && this.queue.isEmpty) this.startTurn(this.forever);
    this.drain();
    // After the first frame's own first-use work (the markdown warm-up), so the cache holds it.
    void this.warmedUp.then(() => setTimeout(startIsDone, 0).unref());
  }

  /** Leave: the terminal back, the runtime closed, the session line. */
  quit(code = 0): void {
    if (this.quitting) return;
    this.quitting = true;
    this.exitCode = code;
    this.stopSpinner();
    this.probe.stop();
    onInterrupt(null);
    onTerminate(null);
    // The terminal comes back at once (a signal's handler runs next and must find it restored).
    this.screen?.stop();
    this.logStats('exit');
    this.term.restore();
    // A turn still running is cancelled, not dropped: what it showed goes into the session.
    if (this.rt?.agent.busy) this.cancelTurn();
    void this.shutdown();
  }

  private async shutdown(): Promise<void> {
    const rt = this.rt ?? (await this.creating?.catch(() => null)) ?? null;
    if (rt) {
      this.printSession(await rt.close(), (s) => process.stderr.write(s));
    }
    this.finished(this.exitCode);
  }

  /** The process is ending without shutdown() (a crash, a signal before the screen was up). */
  private exitNow(): void {
    this.term.restore();
    if (this.sessionPrinted || !this.rt) return;
    this.printSession(this.rt.closeSessionNow(), (s) => {
      try {
        writeSync(2, s);
      } catch {
        /* the terminal is gone */
      }
    });
  }

  private printSession(outcome: SessionOutcome, write: (s: string) => void): void {
    if (this.sessionPrinted) return;
    this.sessionPrinted = true;
    const line = sessionLine(this.rt?.session ?? null, outcome);
    if (line) write(line);
  }

  /** What drawing has cost so far, for the debug log (CLM_DEBUG_LOG; the bench reads it). */
  private logStats(when: string): void {
    const log = this.rt?.host.log;
    const st = this.screen?.stats;
    if (!log || !st) return;
    log(
      `ui ${when}: mode=${this.mode} frames=${st.frames} bytes=${st.bytes} repaints=${st.fullRepaints} scrolls=${st.scrolls} render_ms=${st.renderMs.toFixed(3)}`,
    );
  }

  /** A fault in the screen's own code shows in the transcript; the session goes on. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      try {
        this.view?.print(`internal error: ${(e as Error)?.message ?? String(e)}`, 'error');
      } catch {
        /* nothing more to do */
      }
    }
  }

  private render(urgent = false): void {
    this.screen?.requestRender(urgent);
  }

  // ---- the status bar ----------------------------------------------------------------------

  private statusBar(width: number): string {
    const rt = this.rt;
    const agent = rt?.agent;
    return statusLine(
      {
        provider: rt?.run.providerName,
        model: agent?.model,
        agent: rt?.run.agentName,
        connection: this.connection,
        detail: this.connDetail,
        sandbox: this.sandboxMode,
        mcpLogin: rt?.mcpServers().flatMap((m) => (m.state === 'needs-login' ? [m.name] : [])),
        busy: this.busy,
        tick: this.tick,
        state: this.cancelled && !this.busy ? 'cancelled' : this.state,
        batch: this.batch,
        tokensPerSec: this.tokensPerSec,
        ctxUsed: agent?.ctxInUse ?? 0,
        ctxMax: agent?.ctxMax ?? 0,
        hints: this.mode === 'fullscreen' ? HINTS_FULLSCREEN : HINTS_INLINE,
        linesBelow: this.screen?.linesBelow ?? 0,
        unicode: this.unicode,
      },
      width,
    );
  }

  private setBusy(b: boolean): void {
    if (this.busy === b) return;
    this.busy = b;
    if (b && !this.spinner) {
      this.spinner = setInterval(() => {
        // A reply streaming on screen shows the turn is alive; a turning spinner would only cost
        // bytes (a cursor trip to the status bar each frame). It turns again when the output stops.
        if (monotonicMs() - this.shownAt < SPINNER_MS) return;
        this.tick++;
        this.render();
      }, SPINNER_MS);
    } else if (!b) this.stopSpinner();
  }

  private stopSpinner(): void {
    if (this.spinner) {
      clearInterval(this.spinner);
      this.spinner = null;
    }
  }

  // ---- events ------------------------------------------------------------------------------

  private event(e: RunEvent): void {
    if (isRuntimeEvent(e)) {
      if (e.type === 'sandbox') this.sandboxMode = e.mode;
      if (e.type === 'sandbox' || (e.type === 'ready' && this.rt)) this.render();
      return;
    }
    this.status(e);
    this.withView((v) => v.event(e));
    if (this.showsOutput(e)) this.shownAt = monotonicMs();
    this.render(this.pacing.atOnce(e.type));
    // After the agent has decided what follows the turn (a compaction, a notification), the queue.
    if (e.type === 'turn_done') setImmediate(() => this.guard(() => this.drain()));
  }

  /** Whether the event is streamed output the person sees now (text, shown reasoning, a tool's progress). */
  private showsOutput(e: AgentEvent): boolean {
    if (e.type !== 'text' && e.type !== 'tool_progress' && !(e.type === 'reasoning' && this.settings.showReasoning)) return false;
    return this.mode !== 'fullscreen' || (this.screen?.isFollowing ?? true);
  }

  /** What the status bar shows, from the agent's event. */
  private status(e: AgentEvent): void {
    switch (e.type) {
      case 'turn_start':
        this.turnStarted(e.origin);
        break;
      case 'state':
        this.state = e.state;
        break;
      case 'tool_batch':
        this.batch = e.completed < e.total ? { completed: e.completed, total: e.total } : null;
        break;
      case 'usage':
        if (e.tokensPerSec > 0) this.tokensPerSec = e.tokensPerSec;
        break;
      case 'connection':
        if (e.status !== 'checking') {
          this.connection = e.status;
          this.connDetail = e.detail;
        } else if (this.connection === 'connecting') this.connDetail = null;
        break;
      case 'turn_done':
        this.turnDone(e.status, e.error);
        break;
      default:
    }
  }

  private turnStarted(origin: TurnOrigin): void {
    this.turnOrigin = origin;
    this.logStats('turn start');
    this.setBusy(true);
    this.batch = null;
    this.tokensPerSec = 0;
    this.cancelled = false;
  }

  private turnDone(status: number, error: string | undefined): void {
    this.batch = null;
    this.setBusy(false);
    this.rt?.desk.turnEnded();
    this.lastEnd = { status, error, origin: this.turnOrigin };
    this.cancelled = status === ECANCELED;
    // A reply came: the server is there, whatever the last probe said (or before the first answered).
    if (status === 0) {
      this.connection = 'online';
      this.connDetail = null;
    }
    if (status !== 0 && status !== ECANCELED) this.probe.now();
    this.logStats('turn end');
  }

  /** The agent is idle: the next queued prompt, else -f's prompt again. */
  private drain(): void {
    const rt = this.rt;
    if (!rt || !this.ready || this.quitting || rt.agent.busy) return;
    const next = this.queue.next();
    if (next !== null) {
      this.startTurn(next);
      return;
    }
    if (!this.forever) return;
    const why = this.lastEnd && foreverStop(this.lastEnd);
    if (why) this.stopForever(why);
    else this.startTurn(this.forever);
  }

  private startTurn(text: string): void {
    const rt = this.rt!;
    if (rt.agent.busy) {
      this.queue.unshift(text);
      this.render();
      return;
    }
    this.withView((v) => v.echo(text));
    try {
      rt.submit(text);
    } catch (e) {
      if (e instanceof ClmError && e.code === 'EBUSY') {
        this.queue.unshift(text);
        return;
      }
      this.withView((v) => v.print(`error: ${e instanceof Error ? e.message : String(e)}`, 'error'));
    }
    this.render();
  }

  /** A line the person entered: a command, or a prompt (now, or queued behind the running turn). */
  private submitLine(line: string): void {
    const trimmed = line.trim();
    if (!trimmed) return;
    const isCommand = trimmed.startsWith('/') || trimmed === 'quit' || trimmed === 'exit';
    if (isCommand) {
      if (!this.rt || !this.ready) {
        if (/^(\/(quit|exit|q)|quit|exit)$/.test(trimmed)) {
          this.quit();
          return;
        }
        this.withView((v) => v.print('starting up; try the command again in a moment', 'error'));
        return;
      }
      runCommand(line, this.ctx).then(
        (handled) => {
          if (!handled) this.prompt(line);
        },
        (e: unknown) => this.withView((v) => v.print(`error: ${this.secrets.mask((e as Error)?.message ?? String(e))}`, 'error')),
      );
      return;
    }
    this.prompt(line);
  }

  private prompt(text: string): void {
    if (!this.rt || !this.ready || this.rt.agent.busy || !this.queue.isEmpty) {
      this.queue.add(text);
      this.render(true);
      return;
    }
    this.startTurn(text);
  }

  private cancelTurn(): boolean {
    try {
      this.rt?.agent.cancel();
      return true;
    } catch {
      // Nothing in flight, or a cancel already under way.
      return false;
    }
  }

  /** SIGINT from outside (kill -INT): what Ctrl-C does. */
  private interrupt(): void {
    this.onInput({ type: 'key', key: { name: 'c', ctrl: true, alt: false, shift: false, meta: false, sequence: '\x03' } });
  }

  // ---- keys (what each key does: key-bindings.ts) ------------------------------------------

  private onInput(ev: InputEvent): void {
    if (this.quitting || ev.type === 'focus' || ev.type === 'cursor') return;
    if (this.searchTakes(ev)) return;
    if (ev.type !== 'key' || ev.key.name !== 'tab') this.closeCompletions();
    if (ev.type === 'wheel') {
      if (this.mode === 'fullscreen') this.screen?.scrollBy(ev.delta * WHEEL_ROWS);
      return;
    }
    const id = ev.type === 'key' ? keyId(ev.key) : '';
    if (this.permissionTakes(ev, id) || this.questionTakes(ev, id)) return;
    if (ev.type === 'text' || ev.type === 'paste') this.rt?.desk.typed();
    if (ev.type === 'paste') {
      this.input.editor.insertLiteral(ev.text);
      this.render(true);
      return;
    }
    if (this.runBinding('input', id)) return;
    this.edit(ev);
  }

  /** The key table's row for `id` in `mode`, done; false when there is none. */
  private runBinding(mode: KeyMode, id: string): boolean {
    const action = id ? boundAction(mode, id, this.holds) : null;
    if (!action) return false;
    this.keyActions[action]();
    return true;
  }

  private readonly holds = (c: KeyCondition): boolean => {
    switch (c) {
      case 'busy':
        return this.busy;
      case 'typed':
        return !this.input.editor.isEmpty;
      case 'empty':
        return this.input.editor.isEmpty;
      case 'queued':
        return !this.queue.isEmpty;
    }
  };

  /** The transcript search, while open, takes the keys it uses (not while a permission question is asked). */
  private searchTakes(ev: InputEvent): boolean {
    if (!this.search.active || this.rt?.desk.active) return false;
    const used = this.search.key(ev) === 'used';
    this.render(true);
    return used;
  }

  /** Any key but TAB closes the completion list (and drops a completion still on its way). */
  private closeCompletions(): void {
    this.completionGen++;
    if (this.completions.clear()) this.render(true);
  }

  /**
   * A permission question is asked: the desk takes the keys that answer it (only as the first key
   * of a run of typing that began after it showed) or edit the rule an answer adds. Typing that
   * was going on, other keys with what follows them, keys that arrive at once (a burst) and a
   * paste go into the input.
   */
  private permissionTakes(ev: InputEvent, id: string): boolean {
    const desk = this.rt?.desk;
    desk?.press(monotonicMs());
    if (!desk?.active) return false;
    if (this.runBinding('permission', id)) return true;
    const text = ev.type === 'text' || (ev.type === 'paste' && desk.editing) ? ev.text.replace(/[\r\n]+/g, ' ') : '';
    const dk = deskKeyOf(id, text);
    return !!dk && desk.key(dk);
  }

  /** A command's question takes every key but a paste: its answers, Esc or Ctrl-C for none. */
  private questionTakes(ev: InputEvent, id: string): boolean {
    if (!this.question.active || ev.type === 'paste') return false;
    if (this.runBinding('question', id)) return true;
    if (ev.type === 'text') this.question.key(ev.text[0] ?? '');
    else if (ev.type === 'key' && /^(shift\+)?[a-z]$/.test(id)) this.question.key(ev.key.name);
    return true;
  }

  /** What no binding took goes to the input box's editor. */
  private edit(ev: InputEvent): void {
    if (ev.type === 'text' && ev.text.includes(':')) {
      this.typeWithShortcodes(ev.text);
      this.render(true);
      return;
    }
    const r = this.input.editor.handle(ev);
    if (r === 'eof') this.quit();
    else if (r !== 'ignored') this.render(true);
  }

  /** The actions of the key table (key-bindings.ts). */
  private readonly keyActions: Record<KeyAction, () => void> = {
    denyPermission: () => {
      this.rt?.desk.cancel();
      this.stopForever();
    },
    cancelQuestion: () => this.question.cancel(),
    send: () => this.send(),
    cancelTurn: () => {
      this.cancelTurn();
    },
    cancelTurnAndForever: () => {
      this.cancelTurn();
      this.stopForever();
    },
    clearInput: () => {
      this.input.editor.clear();
      this.render(true);
    },
    quit: () => this.quit(),
    nothing: () => {},
    redraw: () => this.screen?.redraw(),
    toggleOutput: () => this.toggle('expandOutput'),
    toggleReasoning: () => this.toggle('showReasoning'),
    suspend: () => {
      const screen = this.screen;
      this.term.suspend(() => {
        void screen?.resume();
      });
    },
    pageUp: () => this.page(-1),
    pageDown: () => this.page(1),
    scrollToTop: () => {
      if (this.mode === 'fullscreen') this.screen?.scrollToTop();
    },
    scrollToEnd: () => {
      if (this.mode === 'fullscreen') this.screen?.scrollToBottom();
    },
    search: () => this.startSearch(),
    complete: () => this.completeAtCursor(),
    takeBackQueued: () => {
      this.input.editor.setText(this.queue.takeLast()!);
      this.render(true);
    },
  };

  /** Enter: the input's line is sent (a run of typing ends either way). */
  private send(): void {
    this.rt?.desk.endRun();
    const editor = this.input.editor;
    const line = editor.text;
    if (!line.trim()) return;
    editor.submit();
    this.submitLine(line);
    this.render(true);
  }

  /** PgUp/PgDn: a question taller than its window scrolls first, so what is allowed is read whole. */
  private page(dir: 1 | -1): void {
    if (this.perms.scroll(dir)) this.render(true);
    else if (this.mode === 'fullscreen') dir > 0 ? this.screen?.pageDown() : this.screen?.pageUp();
  }

  private startSearch(): void {
    if (this.mode === 'fullscreen') this.search.start();
    else this.withView((v) => v.print("[search needs the full screen; the terminal's own search finds text in the scrollback]", 'notice'));
    this.render(true);
  }

  /**
   * Typed text (keys typed fast arrive as one piece): each `:name:` it closes becomes the emoji,
   * as when typed one key at a time. A paste is not typed: it stays as it is.
   */
  private typeWithShortcodes(text: string): void {
    const editor = this.input.editor;
    for (const piece of text.split(/(?<=:)/)) {
      editor.handle({ type: 'text', text: piece });
      if (!piece.endsWith(':')) continue;
      const before = editor.textBeforeCursor;
      const sc = shortcodeBefore(before, before.length - 1);
      if (sc) editor.replaceBeforeCursor(before.length - sc.start, sc.emoji);
    }
  }

  /** -f ends: Ctrl-C, or a failed turn (`why`). */
  private stopForever(why?: string): void {
    if (!this.forever) return;
    this.forever = null;
    this.withView((v) => v.print(why ? `[--forever stopped: ${why}]` : '[--forever stopped]', 'notice'));
  }

  private toggle(which: keyof ViewSettings): void {
    this.settings[which] = !this.settings[which];
    this.settingsTouched = true;
    this.withView((v) => v.settingsChanged());
    // Inline, what went into the scrollback stays as it was written.
    if (this.mode === 'inline') {
      const what =
        which === 'expandOutput'
          ? this.settings.expandOutput
            ? 'output: full'
            : 'output: short'
          : this.settings.showReasoning
            ? 'reasoning shown'
            : 'reasoning hidden';
      this.withView((v) => v.print(`[${what}; what is already in the scrollback stays as written]`, 'notice'));
    }
    this.render(true);
  }

  private completeAtCursor(): void {
    const rt = this.rt;
    if (!rt) return;
    const editor = this.input.editor;
    const gen = ++this.completionGen;
    let result: CompletionResult;
    try {
      result = complete(editor.textBeforeCursor, this.ctx);
    } catch {
      return;
    }
    const apply = (c: CompletionResult['now']) => {
      if (!c) return;
      if (c.replace || c.insert) editor.replaceBeforeCursor(c.replace, c.insert);
      if (c.candidates.length) this.completions.show(c.candidates, c.heading);
      this.render(true);
    };
    apply(result.now);
    result.later?.then(
      (c) => {
        if (gen === this.completionGen && !this.quitting) apply(c);
      },
      (e: unknown) => {
        if (gen !== this.completionGen || this.quitting) return;
        this.completions.say(`(live model fetch failed: ${this.secrets.mask((e as Error)?.message ?? String(e))})`);
        this.render(true);
      },
    );
  }
}

interface TurnEnd {
  status: number;
  error?: string;
  origin: TurnOrigin;
}

/**
 * Why -f stops after this turn, or null to go on. A failed turn stops it; a cancelled one, a
 * compaction with nothing to fold, or a failed end-of-turn compaction (shown already) does not.
 */
function foreverStop(end: TurnEnd): string | null {
  if (end.status === 0 || end.status === ECANCELED || end.status === EAGAIN || end.origin === 'autocompact') return null;
  return turnError(end.status, end.error ?? `status ${statusName(end.status)}`);
}

/** Steps of `steps`, each followed by `after()`, for up to `ms` or until `after()` says enough; whether they are all done. */
function slice(steps: Generator<void, void, void>, ms: number, after: () => boolean): boolean {
  const until = monotonicMs() + ms;
  for (;;) {
    const done = steps.next().done;
    const enough = after();
    if (done) return true;
    if (enough || monotonicMs() >= until) return false;
  }
}

/** Each of `steps` in a task of its own: keys typed meanwhile are read and drawn between them. */
async function stepByStep(steps: readonly (() => void)[]): Promise<void> {
  for (const step of steps) {
    await nextTask();
    step();
  }
}
