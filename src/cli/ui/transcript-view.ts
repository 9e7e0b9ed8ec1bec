// The transcript of the clm screen driven by the agent's events: the user's echo, replies as
// streamed markdown, reasoning, tool lines and outputs with their collapsing, batch tallies,
// finish notes, notices, compactions, errors. The runtime's events come with the run's secrets
// masked; the view masks the program's own text (prompts, command output) with the same list,
// and the blocks make everything safe to draw.

import { ECANCELED } from '../../core/errors.js';
import type { AgentEvent } from '../../core/events.js';
import type { Message } from '../../core/types.js';
import { CONTEXT_UPDATE_PREFIX } from '../../core/history.js';
import { notRunOf } from '../../core/tool-batch.js';
import { cancelledReplyText } from '../../core/cancelled-reply.js';
import { type Block, paint, sanitize, type Transcript, wrapText } from '../../tui/index.js';
import { typedPart } from '../file-mentions.js';
import { turnError } from '../turn-error.js';
import {
  errorBlock,
  type MarkdownSettings,
  noticeBlock,
  ReasoningBlock,
  ReplyBlock,
  ParagraphBlock,
  userEcho,
  type ViewSettings,
} from './blocks.js';
import type { Secrets } from '../../host/redact.js';
import { maskEvent, viewOf } from '../guard.js';
import { DiffBlock } from './diff-block.js';
import { PermissionRecord } from './permission-question.js';
import { THEME } from './theme.js';
import { LiveOutputBlock, TallyBlock, ToolRoundView, ToolLineBlock, ToolOutputBlock, type ToolView } from './tool-blocks.js';

export interface ViewHost {
  readonly transcript: Transcript;
  /** A block was added or changed: draw when convenient. */
  changed(): void;
}

export type PrintKind = 'info' | 'notice' | 'error' | 'diff';

/** A compaction that succeeded: what it folded, and the summary (collapsed like tool output). */
class CompactionBlock implements Block {
  final = true;
  private readonly summary: string[];
  private cache: { key: string; lines: string[] } | null = null;

  constructor(
    private readonly settings: ViewSettings,
    private readonly line: string,
    summary: string,
  ) {
    this.summary = summary.split('\n');
  }

  render(width: number): string[] {
    const key = `${width}:${this.settings.expandOutput}`;
    if (this.cache?.key === key) return this.cache.lines;
    const out = [''].concat(wrapText(paint(this.line, THEME.notice), width));
    const n = this.summary.length;
    if (this.settings.expandOutput) {
      for (const l of this.summary) for (const w of wrapText(paint(l, THEME.output), width, { prefix: '    ' })) out.push(w);
    } else {
      out.push(paint(`  ... (summary: ${n} line${n === 1 ? '' : 's'}, ^O to expand)`, THEME.meta));
    }
    this.cache = { key, lines: out };
    return out;
  }
}

export class TranscriptView implements ToolView {
  latestBatch: ToolRoundView | null = null;
  latestOutput: ToolOutputBlock | null = null;
  private reply: ReplyBlock | null = null;
  private reasoning: ReasoningBlock | null = null;
  private labelShown = false;
  private batch: ToolRoundView | null = null;
  /** The running calls' output, below everything else while they run. */
  private live: LiveOutputBlock | null = null;
  /** The last finished batch, while nothing but reasoning came after it. */
  private lastBatch: ToolRoundView | null = null;
  private reasoningSince: ReasoningBlock[] = [];
  /** The agent's own notice about a compaction the view has just shown. */
  private skipCompactedNotice = false;
  /** A compaction of this turn failed with this error (shown already: the turn's end need not repeat it). */
  private compactionError: string | null = null;
  /** Text printed while a reply (or shown reasoning) streams: it goes after it, not into it. */
  private readonly waiting: Block[] = [];

  constructor(
    private readonly host: ViewHost,
    readonly settings: ViewSettings,
    private readonly md: MarkdownSettings,
    private readonly secrets: Secrets,
    private readonly foldsBatches: () => boolean,
  ) {}

  /** Older tool batches fold (full screen; inline they are in the scrollback already). */
  get folding(): boolean {
    return this.foldsBatches();
  }

  private get transcript(): Transcript {
    return this.host.transcript;
  }

  /** Append a block, above the live output (anything but reasoning ends a run of tool batches). */
  add(block: Block): void {
    if (block instanceof ReasoningBlock) this.reasoningSince.push(block);
    else if (!(block instanceof ToolLineBlock || block instanceof ToolOutputBlock || block instanceof TallyBlock)) {
      this.lastBatch = null;
      this.reasoningSince = [];
    }
    this.transcript.add(block, this.live ?? undefined);
    this.host.changed();
  }

  private changed(block: Block): void {
    this.transcript.changed(block);
    this.host.changed();
  }

  /** The user's prompt, as the turn starts. */
  echo(text: string): void {
    this.closeSegments();
    this.add(userEcho(this.secrets.mask(text)));
  }

  /**
   * Text from the program (commands, notices): one block, spaced from the one above. While a
   * reply (or reasoning on screen) streams, it waits for that to end: the reply stays one block.
   */
  print(text: string, kind: PrintKind = 'info'): void {
    const masked = this.secrets.mask(text);
    const block = kind === 'error' ? errorBlock(masked) : kind === 'diff' ? new DiffBlock(masked) : noticeBlock(masked, THEME.notice);
    if (this.reply || (this.reasoning && this.settings.showReasoning)) {
      this.waiting.push(block);
      return;
    }
    this.closeSegments();
    this.add(block);
  }

  /** A question and its answer, as the permission prompt leaves them (`-> allowed`). */
  permissionAnswered(question: string, echo: string): void {
    this.closeSegments();
    this.add(new PermissionRecord(this.settings, question, echo));
  }

  clear(): void {
    this.closeSegments();
    this.live = null;
    this.waiting.length = 0;
    this.transcript.clear();
    this.latestBatch = null;
    this.latestOutput = null;
    this.lastBatch = null;
    this.reasoningSince = [];
    this.host.changed();
  }

  /** A setting every block reads changed. */
  settingsChanged(): void {
    this.transcript.changedAll();
    this.host.changed();
  }

  // ---- the agent's events ------------------------------------------------------------------

  event(e: AgentEvent): void {
    switch (e.type) {
      case 'turn_start':
        this.turnStart(e);
        return;
      case 'text':
        if (e.text) this.replyText(e.text);
        return;
      case 'reasoning':
        if (e.text) this.reasoningText(e.text);
        return;
      case 'tool_batch':
        if (e.completed === 0) this.openBatch();
        else if (e.completed >= e.total) this.closeBatch(true);
        return;
      case 'tool_begin': {
        this.closeSegments();
        const b = this.batch ?? this.openBatch();
        const line = new ToolLineBlock(b, e.id, e.name, e.args);
        b.blocks.push(line);
        this.add(line);
        return;
      }
      case 'tool_progress':
        this.progress(e.id, e.text);
        return;
      case 'tool_result':
        this.toolResult(e);
        return;
      case 'finish':
        this.cutShort(e.reason);
        return;
      case 'notice':
        if (this.skipCompactedNotice && e.text.startsWith('compacted ')) {
          this.skipCompactedNotice = false;
          return;
        }
        this.print(`[${e.text}]`, 'notice');
        return;
      case 'repair':
        this.closeSegments();
        this.add(noticeBlock(`[${e.text}]`, THEME.meta));
        return;
      case 'compaction':
        this.compaction(e);
        return;
      case 'turn_done':
        this.turnDone(e.status, e.error);
        return;
      default:
    }
  }

  /** A turn begins: the reply gets its label again; a notification's prompt is shown (a typed one was echoed). */
  private turnStart(e: Extract<AgentEvent, { type: 'turn_start' }>): void {
    this.closeSegments();
    this.labelShown = false;
    this.compactionError = null;
    if (e.origin === 'notify' && e.prompt) this.add(new ParagraphBlock(sanitize(e.prompt), THEME.meta));
  }

  /** A piece of the reply: the reply block, made at its first piece. */
  private replyText(text: string): void {
    this.endReasoning();
    if (!this.reply) {
      this.reply = new ReplyBlock(this.md, !this.labelShown);
      this.labelShown = true;
      this.add(this.reply);
    }
    this.reply.append(text);
    this.changed(this.reply);
  }

  private reasoningText(text: string): void {
    this.endReply();
    if (!this.reasoning) {
      this.reasoning = new ReasoningBlock(this.settings);
      this.add(this.reasoning);
    }
    this.reasoning.append(text);
    // Hidden reasoning changes nothing on screen.
    if (this.settings.showReasoning) this.changed(this.reasoning);
    else this.transcript.changed(this.reasoning);
  }

  /** A tool's output, in its batch; the output before it is drawn again (the latest shows more). */
  private toolResult(e: Extract<AgentEvent, { type: 'tool_result' }>): void {
    this.closeSegments();
    this.endLive(e.id);
    const b = this.batch ?? this.openBatch();
    const out = new ToolOutputBlock(b, e.name, e.content, e.outcome, e.notRun);
    b.blocks.push(out);
    const prev = this.latestOutput;
    this.latestOutput = out;
    if (prev) this.changed(prev);
    this.add(out);
  }

  /** Why the model stopped, when a reply was cut short. */
  private cutShort(reason: Extract<AgentEvent, { type: 'finish' }>['reason']): void {
    const notice =
      reason === 'length'
        ? noticeBlock('[truncated: hit token limit]', THEME.timeout)
        : reason === 'content_filter'
          ? noticeBlock('[stopped: content filter]', THEME.error)
          : null;
    if (!notice) return;
    this.closeSegments();
    this.add(notice);
  }

  private turnDone(status: number, error: string | undefined): void {
    this.closeSegments();
    this.closeBatch(false);
    if (status === ECANCELED) {
      if (error !== 'agent closed') this.add(noticeBlock('[cancelled]', THEME.timeout));
    } else if (status !== 0 && error && error !== this.compactionError) this.add(errorBlock(`error: ${turnError(status, error)}`));
  }

  private compaction(e: Extract<AgentEvent, { type: 'compaction' }>): void {
    this.closeSegments();
    if (e.phase === 'started') {
      if (e.kind === 'mid_chain') this.add(noticeBlock('[compacting the conversation before the next tool round...]'));
      else if (e.kind === 'end_of_turn') this.add(noticeBlock('[compacting the conversation...]'));
      return;
    }
    if (e.phase === 'failed') {
      this.compactionError = e.error;
      this.add(noticeBlock(`[compaction failed: ${e.error}]`, THEME.timeout));
      return;
    }
    const line = `[compacted ${e.record.count} messages into a summary: ${e.messagesBefore} → ${e.messagesAfter} messages, ~${e.tokensBefore} → ~${e.tokensAfter} tokens]`;
    this.skipCompactedNotice = true;
    this.add(new CompactionBlock(this.settings, line, sanitize(e.record.summary)));
  }

  /** A running call's latest output, shown live (masked by the runtime, without an end that may begin a secret). */
  private progress(id: string, text: string): void {
    const line = this.batch?.blocks.find((b): b is ToolLineBlock => b instanceof ToolLineBlock && b.id === id);
    if (!line) return;
    if (!this.live) {
      this.live = new LiveOutputBlock();
      this.transcript.add(this.live);
    }
    this.live.set(id, line.summary, text);
    this.changed(this.live);
  }

  /** The call ended (or all did: no id): its live lines go. */
  private endLive(id?: string): void {
    const live = this.live;
    if (!live) return;
    if (id !== undefined && live.delete(id)) {
      this.changed(live);
      return;
    }
    this.live = null;
    this.transcript.remove(live);
    this.host.changed();
  }

  private openBatch(): ToolRoundView {
    this.closeSegments();
    this.closeBatch(false);
    const b = new ToolRoundView(this, this.lastBatch, this.reasoningSince);
    this.lastBatch = null;
    this.reasoningSince = [];
    const prev = this.latestBatch;
    this.latestBatch = b;
    this.batch = b;
    // The batch that was the latest folds now.
    if (prev && this.folding) for (const blk of prev.runBlocks()) this.transcript.changed(blk);
    this.host.changed();
    return b;
  }

  private closeBatch(withTally: boolean): void {
    const b = this.batch;
    if (!b) return;
    this.batch = null;
    this.endLive();
    if (withTally) {
      const t = new TallyBlock(b);
      b.blocks.push(t);
      this.transcript.add(t);
    }
    b.done = true;
    for (const blk of b.blocks) blk.final = true;
    this.lastBatch = b;
    this.reasoningSince = [];
    this.host.changed();
  }

  private endReply(): void {
    const r = this.reply;
    if (!r) return;
    this.reply = null;
    r.finish();
    this.changed(r);
    this.addWaiting();
  }

  private endReasoning(): void {
    const r = this.reasoning;
    if (!r) return;
    this.reasoning = null;
    r.finish();
    this.changed(r);
    this.addWaiting();
  }

  /** What was printed while a segment streamed, once none does. */
  private addWaiting(): void {
    if (this.reply || this.reasoning || !this.waiting.length) return;
    for (const b of this.waiting.splice(0)) this.add(b);
  }

  private closeSegments(): void {
    this.endReply();
    this.endReasoning();
  }

  // ---- a resumed session -------------------------------------------------------------------

  /** The whole logged conversation, shown as it went (tool outputs collapsed like live ones). */
  replay(messages: readonly Message[]): void {
    for (const step of this.replaySteps(messages)) void step;
  }

  /** replay(), a message at each step: a long conversation is shown between keys, not in one piece. */
  *replaySteps(messages: readonly Message[]): Generator<void, void, void> {
    // What the session file holds is shown as the runtime shows live events.
    const event = (e: AgentEvent) => this.event(viewOf(maskEvent(e, this.secrets), 'screen'));
    /** Tool results the last batch still waits for. */
    let pending = 0;
    for (const m of messages) {
      if (m.role === 'tool') pending = this.replayResult(m, event, pending);
      else if (m.role === 'user' || m.role === 'assistant') {
        if (pending) this.closeBatch(true);
        pending = m.role === 'user' ? this.replayPrompt(m, event) : this.replayReply(m, event);
      }
      yield;
    }
    if (pending) this.closeBatch(true);
    this.closeSegments();
  }

  /** A prompt of the log (context updates are not shown): no tool result waits after it. */
  private replayPrompt(m: Message, event: (e: AgentEvent) => void): number {
    if (m.content && !m.content.startsWith(CONTEXT_UPDATE_PREFIX)) {
      event({ type: 'turn_start', origin: 'submit', prompt: m.content });
      this.echo(typedPart(m.content));
    }
    return 0;
  }

  /** A reply of the log and the tool calls it made: how many results its batch waits for. */
  private replayReply(m: Message, event: (e: AgentEvent) => void): number {
    // A cancelled reply: what was shown of it, then `[cancelled]` as it was shown live.
    const cut = cancelledReplyText(m);
    const text = cut ?? m.content;
    if (text) {
      event({ type: 'text', text });
      this.endReply();
    }
    if (cut !== null) this.add(noticeBlock('[cancelled]', THEME.timeout));
    const calls = m.toolCalls ?? [];
    if (calls.length) {
      event({ type: 'tool_batch', completed: 0, total: calls.length });
      for (const c of calls) event({ type: 'tool_begin', id: c.id, name: c.name, args: c.args });
    }
    return calls.length;
  }

  /** A tool result of the log; the batch closes with its last. How many are left to wait for. */
  private replayResult(m: Message, event: (e: AgentEvent) => void, pending: number): number {
    const text = m.content ?? '';
    const notRun = notRunOf(text);
    event({
      type: 'tool_result',
      id: m.toolCallId ?? '',
      name: m.toolName ?? 'tool',
      content: text,
      outcome: text.startsWith('[tool failed:') ? 'failed' : 'ok',
      ...(notRun && { notRun }),
    });
    if (pending === 1) this.closeBatch(true);
    return Math.max(0, pending - 1);
  }
}
