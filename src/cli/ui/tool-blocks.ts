// Tool calls in the transcript: the summary line of each call, its output, the tally of a
// finished batch; and the collapsing the original does so tool work does not bury the
// conversation:
//
//   - the latest output shows up to 6 lines, then `  ... (+N lines, ^O to expand)`;
//   - older outputs show `  ... (N lines, ^O to expand)`;
//   - batches older than the latest one fold: each run of batches with nothing but (hidden)
//     reasoning between them becomes one line `  -- ran 2 commands, read 3 files (^O to expand)`.
//
// ^O (expandOutput) shows everything. Folding needs blocks that can still change, so only the
// full screen folds batches; inline, a batch is written into the scrollback as it ends.
//
// While calls run, the last lines of each one's output show live below everything else (one
// block that goes when they end; the call's result then shows as above).

// From their modules, not the toolkit's index (which holds markdown): the permission question,
// drawn before the first frame, shares the collapsing.
import { sanitize } from '../../tui/sanitize.js';
import { paint, type Style } from '../../tui/style.js';
import type { Block } from '../../tui/transcript.js';
import { truncate, wrapText } from '../../tui/wrap.js';
import type { NotRun, ToolOutcome } from '../../core/types.js';
import type { ReasoningBlock, ViewSettings } from './blocks.js';
import { THEME } from './theme.js';
import { addTally, countCall, emptyRoundCounts, type RoundCounts, tallyText, toolSummary } from './tool-summary.js';

/** Lines of the latest output shown while collapsed. */
export const LATEST_OUTPUT_LINES = 6;
/** Which of an output's lines show: all (^O), the latest output's first few, an older one's none. */
type ShownOutput = 'all' | 'latest' | 'older';
/** Lines of a running call's output shown live. */
export const LIVE_LINES = 5;

/** What the tool blocks read: the settings, which batch and output are the latest, whether batches fold. */
export interface ToolView {
  readonly settings: ViewSettings;
  /** Older batches fold (full screen). */
  readonly folding: boolean;
  latestBatch: ToolRoundView | null;
  latestOutput: ToolOutputBlock | null;
}

/** One round of tool calls: its blocks in transcript order and what it did. */
export class ToolRoundView {
  readonly blocks: (ToolLineBlock | ToolOutputBlock | TallyBlock)[] = [];
  readonly tally: RoundCounts = emptyRoundCounts();
  next: ToolRoundView | null = null;
  done = false;

  /**
   * `prev`: the batch before it when nothing but reasoning came between them (they fold into one
   * line together); `reasoningBefore`: that reasoning (shown, it separates them).
   */
  constructor(
    readonly view: ToolView,
    readonly prev: ToolRoundView | null,
    readonly reasoningBefore: readonly ReasoningBlock[] = [],
  ) {
    if (prev) prev.next = this;
  }

  get folded(): boolean {
    const v = this.view;
    return v.folding && this.done && !v.settings.expandOutput && v.latestBatch !== this;
  }

  /** Whether this batch starts a folded line of its own (rather than joining the one above). */
  get startsRun(): boolean {
    const p = this.prev;
    return !p?.folded || (this.view.settings.showReasoning && this.reasoningBefore.some((r) => r.hasText));
  }

  /** The folded line: this batch's tally and those of the batches folded with it. */
  foldedLine(): string {
    const t = emptyRoundCounts();
    for (let b: ToolRoundView | null = this; b; b = b.next) {
      if (b !== this && (!b.folded || b.startsRun)) break;
      addTally(t, b.tally);
    }
    const what = tallyText(t) || 'ran no tools';
    return paint(`  -- ${what} (^O to expand)`, THEME.meta);
  }

  /** The lines of `block` when the batch is folded: the folded line for its first block, else none. */
  foldedLines(block: Block): string[] | null {
    if (!this.folded) return null;
    return this.blocks[0] === block && this.startsRun ? ['', this.foldedLine()] : [];
  }

  /** Every block whose lines may change when this batch folds or unfolds (those of its run too). */
  runBlocks(): Block[] {
    let head: ToolRoundView = this;
    while (head.prev?.done) head = head.prev;
    const out: Block[] = [];
    for (let b: ToolRoundView | null = head; b; b = b.next) out.push(...b.blocks);
    return out;
  }
}

/** `  executing shell command: ls -la` */
export class ToolLineBlock implements Block {
  final = true;
  readonly summary: string;
  private cache: { width: number; lines: string[] } | null = null;

  constructor(
    readonly batch: ToolRoundView,
    readonly id: string,
    readonly name: string,
    args: string,
  ) {
    this.summary = sanitize(toolSummary(name, args));
  }

  render(width: number): string[] {
    const folded = this.batch.foldedLines(this);
    if (folded) return folded;
    if (this.cache?.width === width) return this.cache.lines;
    const lines = this.batch.blocks[0] === this ? [''] : [];
    for (const l of wrapText(paint(`  ${this.summary}`, THEME.tool), width, { restPrefix: '    ' })) lines.push(l);
    this.cache = { width, lines };
    return lines;
  }
}

/** What a call returned: its output (dim), or `[x name] …` / `[timeout name] …`. */
export class ToolOutputBlock implements Block {
  final = false;
  private readonly lines: string[];
  private cache: { key: string; lines: string[] } | null = null;

  constructor(
    readonly batch: ToolRoundView,
    readonly name: string,
    content: string,
    readonly outcome: ToolOutcome,
    notRun?: NotRun,
  ) {
    countCall(batch.tally, name, notRun);
    const body = content.endsWith('\n') ? content.slice(0, -1) : content;
    this.lines = body === '' ? [] : body.split('\n');
  }

  get lineCount(): number {
    return this.lines.length;
  }

  private get failure(): { prefix: string; st: Style } | null {
    if (this.outcome === 'ok') return null;
    return this.outcome === 'timedout'
      ? { prefix: `[timeout ${this.name}] `, st: THEME.timeout }
      : { prefix: `[x ${this.name}] `, st: THEME.error };
  }

  render(width: number): string[] {
    const folded = this.batch.foldedLines(this);
    if (folded) return folded;
    const v = this.batch.view;
    const mode: ShownOutput = v.settings.expandOutput ? 'all' : v.latestOutput === this ? 'latest' : 'older';
    const key = `${width}:${mode}`;
    if (this.cache?.key !== key) this.cache = { key, lines: this.draw(width, mode) };
    return this.cache.lines;
  }

  /** How many of the output's lines show: all of them, the latest output's first few, or (older) none; a failure's first line always. */
  private shownCount(mode: ShownOutput): number {
    const n = this.lines.length;
    if (mode === 'all') return n;
    if (mode === 'latest') return Math.min(n, LATEST_OUTPUT_LINES);
    return this.failure ? Math.min(n, 1) : 0;
  }

  private draw(width: number, mode: ShownOutput): string[] {
    const n = this.lines.length;
    const fail = this.failure;
    const out: string[] = [];
    const push = (text: string, st: Style, prefix: string) => {
      for (const l of wrapText(paint(text, st), width, { hard: true, prefix, restPrefix: '    ' })) out.push(l);
    };
    const shown = this.shownCount(mode);
    // A failure shows its first line with the tool's name (an empty one when there is none).
    if (fail && n === 0) push('', fail.st, paint(fail.prefix, fail.st));
    for (let i = 0; i < shown; i++) {
      const text = sanitize(this.lines[i]!, { keepStyles: !fail });
      push(text, fail?.st ?? THEME.output, fail && i === 0 ? paint(fail.prefix, fail.st) : '    ');
    }
    const rest = n - Math.max(shown, fail ? 1 : 0);
    if (rest > 0) {
      const what = shown > 0 || fail ? `+${rest}` : `${rest}`;
      out.push(paint(`  ... (${what} line${rest === 1 ? '' : 's'}, ^O to expand)`, THEME.meta));
    }
    return out;
  }
}

/** `  -- ran 1 command, read 2 files` once the batch is done. */
export class TallyBlock implements Block {
  final = true;

  constructor(readonly batch: ToolRoundView) {}

  render(): string[] {
    const folded = this.batch.foldedLines(this);
    if (folded) return folded;
    const t = tallyText(this.batch.tally);
    return t ? [paint(`  -- ${t}`, THEME.meta)] : [];
  }
}

/**
 * The end of each running call's output, as it comes (never final: it is taken away when the
 * calls end). With several calls live, each one's lines go under its summary line.
 */
export class LiveOutputBlock implements Block {
  final = false;
  private readonly calls = new Map<string, { summary: string; lines: string[] }>();
  private cache: { width: number; lines: string[] } | null = null;

  get isEmpty(): boolean {
    return this.calls.size === 0;
  }

  /** The call's latest report (masked already): its last LIVE_LINES lines are kept. */
  set(id: string, summary: string, text: string): void {
    const body = sanitize(text.endsWith('\n') ? text.slice(0, -1) : text).replace(/\t/g, '    ');
    this.calls.set(id, { summary, lines: body === '' ? [] : body.split('\n').slice(-LIVE_LINES) });
    this.cache = null;
  }

  /** The call ended; whether anything is left to show. */
  delete(id: string): boolean {
    this.calls.delete(id);
    this.cache = null;
    return !this.isEmpty;
  }

  render(width: number): string[] {
    if (this.cache?.width === width) return this.cache.lines;
    const out: string[] = [];
    const many = this.calls.size > 1;
    for (const c of this.calls.values()) {
      if (many) out.push(paint(truncate(`  ${c.summary}`, width), THEME.tool));
      // One row per line, cut at the width: the block keeps its height while lines come and go.
      for (const l of c.lines) out.push(paint(truncate(`    ${l}`, width), THEME.output));
    }
    this.cache = { width, lines: out };
    return out;
  }
}
