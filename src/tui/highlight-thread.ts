// Long code is highlighted in a worker thread (highlight-worker.ts): highlight.js takes tens of
// milliseconds on a few hundred lines, and inside a frame that is how long a key typed then waits
// for its echo. The caller draws such code plain until its HTML is back, then draws it again.
//
// One block is in the worker at a time, in the order asked for (a screen draws what it shows
// first: a resumed conversation's end, then the rest as it is laid out), once the worker says it
// is ready; under a deadline: a grammar that backtracks for ever on some input stops only the
// worker (it is ended and started again for the next block), and that code stays plain. The HTML
// is kept for the block's next render (a resize, a scroll back) up to a total size; the oldest
// goes first. A worker idle for a while is ended (its heap is a dozen megabytes), and started
// again for the next long block. While more blocks wait (a resumed conversation lays out many at
// once), answers are told at most every NOTICE_EVERY_MS: each notice draws every block still
// waiting again, and one per answer would be quadratic.

import { Worker } from 'node:worker_threads';

/** What the worker is asked: highlight `code` as `lang`. */
export interface HighlightRequest {
  id: number;
  code: string;
  lang: string;
}

/** The worker is ready (its languages registered), or its answer: highlight.js's HTML, null when it could not highlight the code. */
export type HighlightReply = { t: 'ready' } | { t: 'html'; id: number; html: string | null };

export interface HighlightThreadOptions {
  /** How long one block may take in the worker (default 10 s). */
  deadlineMs?: number;
  /** HTML kept for code drawn again, in characters (default 8 Mi). */
  cacheChars?: number;
  /** How long an idle worker is kept (default 30 s). */
  idleMs?: number;
  /** The worker's script (default: found next to this code). */
  script?: URL;
}

const NOTICE_EVERY_MS = 250;

interface Job {
  id: number;
  key: string;
  code: string;
  lang: string;
  /** Code still streaming (streamingHtml): answered into `streamed`, not kept with the others. */
  streaming?: true;
}

/** An answer for code still streaming: `html` colours `code` (null: it stays plain). */
export interface StreamedHtml {
  code: string;
  lang: string;
  html: string | null;
}

/**
 * The worker script from wherever this code runs: the sources (tests, via tsx), or next to it, as
 * highlight-worker.js (tsc's dist/tui, or the CLI bundle's dist/cli.cjs).
 */
function workerScript(): { script: URL | string; eval: boolean } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { script: new URL('./highlight-worker.js', here), eval: false };
  // Node 20 resolves a worker's entry before any --import preload runs: register tsx first.
  const api = import.meta.resolve('tsx/esm/api');
  const target = new URL('./highlight-worker.ts', here).href;
  return { script: `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(target)}); })`, eval: true };
}

export class HighlightThread {
  private worker: Worker | null = null;
  private why: string | null = null;
  private readonly queue: Job[] = [];
  private running: { job: Job; timer: ReturnType<typeof setTimeout> } | null = null;
  private idle: ReturnType<typeof setTimeout> | null = null;
  /** The worker has registered its languages (blocks wait in the queue until then). */
  private ready = false;
  private starting: ReturnType<typeof setTimeout> | null = null;
  private notice: ReturnType<typeof setTimeout> | null = null;
  private noticeAt = 0;
  /** Code asked for and not answered yet, by key. */
  private readonly asked = new Set<string>();
  /** Answers by key (null: stays plain), oldest first. */
  private readonly answers = new Map<string, string | null>();
  private answerChars = 0;
  /** The newest answer for code still streaming, and the job waiting in the queue for newer code. */
  private streamed: StreamedHtml | null = null;
  private streamingJob: Job | null = null;
  private nextId = 1;
  private readonly deadlineMs: number;
  private readonly cacheChars: number;

  /** `answered` is called after each answer (and when the thread fails), to draw again. */
  constructor(
    private readonly answered: () => void,
    private readonly opts: HighlightThreadOptions = {},
  ) {
    this.deadlineMs = opts.deadlineMs ?? 10_000;
    this.cacheChars = opts.cacheChars ?? 8 << 20;
  }

  /** Why the thread cannot be used (it could not start, or stopped), or null. */
  get failed(): string | null {
    return this.why;
  }

  /**
   * The HTML of `code` in `lang`: a string once highlighted, null when it stays plain, undefined
   * while it is being highlighted (asked for by the first such call).
   */
  html(code: string, lang: string): string | null | undefined {
    const key = `${lang}\n${code}`;
    const known = this.answers.get(key);
    if (known !== undefined) {
      // Used again: the last to go.
      this.answers.delete(key);
      this.answers.set(key, known);
      return known;
    }
    if (this.why) return null;
    if (!this.asked.has(key)) {
      this.asked.add(key);
      this.queue.push({ id: this.nextId++, key, code, lang });
      this.next();
    }
    return undefined;
  }

  /** The newest answer streamingHtml gave, asking for nothing. */
  get lastStreamed(): StreamedHtml | undefined {
    return this.streamed ?? undefined;
  }

  /**
   * Colours for code that grows with every piece (a block still streaming): the newest answer for
   * such code, which may be for less of it, or undefined; `code` is asked for unless it is being
   * highlighted. One such job waits at a time (the newest code replaces the code it waits with),
   * and its answers are not kept with the others: each piece would be a block of its own. After
   * an answer that leaves code plain, code that goes on from it is not asked for.
   */
  streamingHtml(code: string, lang: string): StreamedHtml | undefined {
    const last = this.streamed;
    const plainFor = last?.html === null && last.lang === lang && code.startsWith(last.code);
    const key = `${lang}\n${code}`;
    const busy = this.running?.job.key === key || this.streamingJob?.key === key || (last?.lang === lang && last.code === code);
    if (!this.why && !plainFor && !busy) {
      if (this.streamingJob) Object.assign(this.streamingJob, { key, code, lang });
      else {
        this.streamingJob = { id: this.nextId++, key, code, lang, streaming: true };
        this.queue.push(this.streamingJob);
        this.next();
      }
    }
    return last ?? undefined;
  }

  /** End the worker; code asked for meanwhile stays plain. */
  close(): void {
    this.fail('the highlighter thread is closed');
  }

  private next(): void {
    if (this.running || this.why) return;
    if (!this.queue.length) return this.rest();
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const worker = this.worker ?? this.start();
    if (!worker) return;
    worker.ref();
    if (!this.ready) return; // its 'ready' comes back here
    const job = this.queue.shift()!;
    if (job === this.streamingJob) this.streamingJob = null;
    const timer = setTimeout(() => this.overrun(job), this.deadlineMs);
    this.running = { job, timer };
    worker.postMessage({ id: job.id, code: job.code, lang: job.lang } satisfies HighlightRequest);
  }

  /** Nothing to do: the worker does not keep the process alive, and ends if nothing comes for a while. */
  private rest(): void {
    if (!this.worker) return;
    this.worker.unref();
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => this.stop(), this.opts.idleMs ?? 30_000).unref();
  }

  private start(): Worker | null {
    let worker: Worker;
    try {
      const loc = this.opts.script ? { script: this.opts.script, eval: false } : workerScript();
      // A small young generation: the worker's own memory is most of what highlighting adds.
      const resourceLimits = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 4 };
      worker = new Worker(loc.script, { eval: loc.eval, execArgv: [], resourceLimits });
    } catch (e) {
      this.fail(`cannot start the highlighter thread: ${(e as Error).message}`);
      return null;
    }
    worker.on('message', (m: HighlightReply) => {
      if (this.worker !== worker) return;
      if (m.t === 'ready') {
        this.ready = true;
        if (this.starting) clearTimeout(this.starting);
        this.next();
      } else if (this.running?.job.id === m.id) this.answer(this.running.job, m.html);
    });
    worker.on('error', (e) => {
      if (this.worker === worker) this.fail(`the highlighter thread failed: ${e.message}`);
    });
    worker.on('exit', (code) => {
      if (this.worker === worker) this.fail(`the highlighter thread stopped (exit ${code})`);
    });
    this.worker = worker;
    this.ready = false;
    const what = `the highlighter thread did not start within ${this.deadlineMs} ms`;
    this.starting = setTimeout(() => this.worker === worker && !this.ready && this.fail(what), this.deadlineMs).unref();
    return worker;
  }

  /** A block over its deadline stays plain; the worker stuck on it is ended, a new one takes the rest. */
  private overrun(job: Job): void {
    this.stop();
    this.answer(job, null);
  }

  /** End the worker (it is not failing: the next block starts another). */
  private stop(): void {
    const worker = this.worker;
    this.worker = null;
    this.ready = false;
    if (this.starting) clearTimeout(this.starting);
    void worker?.terminate();
  }

  /** Whether a worker is running (tests). */
  get started(): boolean {
    return this.worker !== null;
  }

  private answer(job: Job, html: string | null): void {
    if (this.running) clearTimeout(this.running.timer);
    this.running = null;
    if (job.streaming) this.streamed = { code: job.code, lang: job.lang, html };
    else {
      this.asked.delete(job.key);
      this.keep(job.key, html);
    }
    this.next();
    this.tell();
  }

  /** Tell of the answers: at once when none is left to wait for, else at most every NOTICE_EVERY_MS. */
  private tell(): void {
    const wait = this.running ? this.noticeAt + NOTICE_EVERY_MS - Date.now() : 0;
    if (wait > 0) {
      this.notice ??= setTimeout(() => {
        this.notice = null;
        this.tell();
      }, wait);
      return;
    }
    if (this.notice) clearTimeout(this.notice);
    this.notice = null;
    this.noticeAt = Date.now();
    this.answered();
  }

  private keep(key: string, html: string | null): void {
    this.answers.set(key, html);
    this.answerChars += key.length + (html?.length ?? 0);
    for (const [k, h] of this.answers) {
      if (this.answerChars <= this.cacheChars || k === key) break;
      this.answers.delete(k);
      this.answerChars -= k.length + (h?.length ?? 0);
    }
  }

  /** The thread cannot be used: what was asked for is told, so it is drawn another way. */
  private fail(why: string): void {
    if (this.why) return;
    this.why = why;
    const asked = this.asked.size > 0 || this.streamingJob !== null || this.running?.job.streaming === true;
    if (this.running) clearTimeout(this.running.timer);
    this.running = null;
    this.queue.length = 0;
    this.streamingJob = null;
    this.asked.clear();
    if (this.idle) clearTimeout(this.idle);
    if (this.notice) clearTimeout(this.notice);
    this.notice = null;
    this.stop();
    if (asked) this.answered();
  }
}
