// The transcript of the clm screen driven by the agent's events: the user's echo, replies as
// streamed markdown, reasoning, tool lines and outputs with their collapsing, batch tallies,
// finish notes, notices, compactions, errors. Everything from the model or a tool is masked for
// secrets and made safe to draw before it reaches a block.

import { ECANCELED } from '../../core/errors.js';
import type { AgentEvent } from '../../core/events.js';
import type { Message } from '../../core/types.js';
import { CONTEXT_UPDATE_PREFIX } from '../../core/history.js';
import { type Block, paint, sanitize, type Transcript, wrapText } from '../../tui/index.js';
import { turnError } from '../turn-error.js';
import {
  errorBlock,
  headLines,
  type MarkdownSettings,
  noticeBlock,
  ReasoningBlock,
  ReplyBlock,
  TextBlock,
  userEcho,
  type ViewSettings,
} from './blocks.js';
import { MaskedStream, type SecretList } from './secret-mask.js';
import { THEME } from './theme.js';
import { TallyBlock, ToolBatch, ToolLineBlock, ToolOutputBlock, type ToolView } from './tool-blocks.js';

export interface ViewHost {
  readonly transcript: Transcript;
  /** A block was added or changed: draw when convenient. */
  changed(): void;
}

export type PrintKind = 'info' | 'notice' | 'error';

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
  latestBatch: ToolBatch | null = null;
  latestOutput: ToolOutputBlock | null = null;
  private reply: ReplyBlock | null = null;
  private replyMask: MaskedStream;
  private reasoning: ReasoningBlock | null = null;
  private reasoningMask: MaskedStream;
  private labelShown = false;
  private batch: ToolBatch | null = null;
  /** The last finished batch, while nothing but reasoning came after it. */
  private lastBatch: ToolBatch | null = null;
  private reasoningSince: ReasoningBlock[] = [];
  /** The agent's own notice about a compaction the view has just shown. */
  private skipCompactedNotice = false;
  /** A compaction of this turn failed with this error (shown already: the turn's end need not repeat it). */
  private compactionError: string | null = null;

  constructor(
    private readonly host: ViewHost,
    readonly settings: ViewSettings,
    private readonly md: MarkdownSettings,
    private readonly secrets: SecretList,
    private readonly foldsBatches: () => boolean,
  ) {
    this.replyMask = new MaskedStream(secrets);
    this.reasoningMask = new MaskedStream(secrets);
  }

  /** Older tool batches fold (full screen; inline they are in the scrollback already). */
  get folding(): boolean {
    return this.foldsBatches();
  }

  private get transcript(): Transcript {
    return this.host.transcript;
  }

  /** Append a block (anything but reasoning ends a run of tool batches). */
  add(block: Block): void {
    if (block instanceof ReasoningBlock) this.reasoningSince.push(block);
    else if (!(block instanceof ToolLineBlock || block instanceof ToolOutputBlock || block instanceof TallyBlock)) {
      this.lastBatch = null;
      this.reasoningSince = [];
    }
    this.transcript.add(block);
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

  /** Text from the program (commands, notices): one block, spaced from the one above. */
  print(text: string, kind: PrintKind = 'info'): void {
    this.closeSegments();
    const masked = this.secrets.mask(text);
    if (kind === 'error') this.add(errorBlock(masked));
    else this.add(noticeBlock(masked, THEME.notice));
  }

  /** A question and its answer, as the permission prompt leaves them (`-> allowed`). */
  permissionAnswered(question: string, echo: string): void {
    this.closeSegments();
    const { lines, more } = headLines(question, 3);
    const q = lines.join('\n') + (more ? `\n  (+${more} more line${more === 1 ? '' : 's'})` : '');
    this.add(new TextBlock(`${q}\n${echo}`, THEME.permission));
  }

  clear(): void {
    this.closeSegments();
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
        this.closeSegments();
        this.labelShown = false;
        this.compactionError = null;
        if (e.origin === 'notify' && e.prompt) this.add(new TextBlock(this.secrets.mask(sanitize(e.prompt)), THEME.meta));
        return;
      case 'text': {
        if (!e.text) return;
        this.endReasoning();
        if (!this.reply) {
          this.reply = new ReplyBlock(this.md, !this.labelShown);
          this.labelShown = true;
          this.add(this.reply);
        }
        const t = this.replyMask.push(e.text);
        if (t) {
          this.reply.append(t);
          this.changed(this.reply);
        }
        return;
      }
      case 'reasoning': {
        if (!e.text) return;
        this.endReply();
        if (!this.reasoning) {
          this.reasoning = new ReasoningBlock(this.settings);
          this.add(this.reasoning);
        }
        const t = this.reasoningMask.push(e.text);
        if (t) {
          this.reasoning.append(t);
          // Hidden reasoning changes nothing on screen.
          if (this.settings.showReasoning) this.changed(this.reasoning);
          else this.transcript.changed(this.reasoning);
        }
        return;
      }
      case 'tool_batch':
        if (e.completed === 0) this.openBatch();
        else if (e.completed >= e.total) this.closeBatch(true);
        return;
      case 'tool_begin': {
        this.closeSegments();
        const b = this.batch ?? this.openBatch();
        const line = new ToolLineBlock(b, e.id, e.name, this.secrets.mask(e.args));
        b.blocks.push(line);
        this.add(line);
        return;
      }
      case 'tool_result': {
        this.closeSegments();
        const b = this.batch ?? this.openBatch();
        const out = new ToolOutputBlock(b, e.name, this.secrets.mask(e.content), e.outcome);
        b.blocks.push(out);
        const prev = this.latestOutput;
        this.latestOutput = out;
        if (prev) this.changed(prev);
        this.add(out);
        return;
      }
      case 'finish':
        if (e.reason === 'length') {
          this.closeSegments();
          this.add(noticeBlock('[truncated: hit token limit]', THEME.timeout));
        } else if (e.reason === 'content_filter') {
          this.closeSegments();
          this.add(noticeBlock('[stopped: content filter]', THEME.error));
        }
        return;
      case 'notice':
        if (this.skipCompactedNotice && e.text.startsWith('compacted ')) {
          this.skipCompactedNotice = false;
          return;
        }
        this.print(`[${e.text}]`, 'notice');
        return;
      case 'compaction':
        this.compaction(e);
        return;
      case 'turn_done':
        this.closeSegments();
        this.closeBatch(false);
        if (e.status === ECANCELED) {
          if (e.error !== 'agent closed') this.add(noticeBlock('[cancelled]', THEME.timeout));
        } else if (e.status !== 0 && e.error && e.error !== this.compactionError)
          this.add(errorBlock(`error: ${this.secrets.mask(turnError(e.status, e.error))}`));
        return;
      default:
    }
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
      this.add(noticeBlock(`[compaction failed: ${this.secrets.mask(e.error)}]`, THEME.timeout));
      return;
    }
    const line = `[compacted ${e.record.count} messages into a summary: ${e.messagesBefore} → ${e.messagesAfter} messages, ~${e.tokensBefore} → ~${e.tokensAfter} tokens]`;
    this.skipCompactedNotice = true;
    this.add(new CompactionBlock(this.settings, line, sanitize(this.secrets.mask(e.record.summary))));
  }

  private openBatch(): ToolBatch {
    this.closeSegments();
    this.closeBatch(false);
    const b = new ToolBatch(this, this.lastBatch, this.reasoningSince);
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
    const rest = this.replyMask.flush();
    if (rest) r.append(rest);
    r.finish();
    this.changed(r);
  }

  private endReasoning(): void {
    const r = this.reasoning;
    if (!r) return;
    this.reasoning = null;
    const rest = this.reasoningMask.flush();
    if (rest) r.append(rest);
    r.finish();
    this.changed(r);
  }

  private closeSegments(): void {
    this.endReply();
    this.endReasoning();
  }

  // ---- a resumed session -------------------------------------------------------------------

  /** The whole logged conversation, shown as it went (tool outputs collapsed like live ones). */
  replay(messages: readonly Message[]): void {
    let pending = 0;
    for (const m of messages) {
      if (m.role === 'user') {
        if (pending) {
          this.closeBatch(true);
          pending = 0;
        }
        if (m.content && !m.content.startsWith(CONTEXT_UPDATE_PREFIX)) {
          this.event({ type: 'turn_start', origin: 'submit', prompt: m.content });
          this.echo(m.content);
        }
      } else if (m.role === 'assistant') {
        if (pending) {
          this.closeBatch(true);
          pending = 0;
        }
        if (m.content) {
          this.event({ type: 'text', text: m.content });
          this.endReply();
        }
        const calls = m.toolCalls ?? [];
        if (calls.length) {
          this.event({ type: 'tool_batch', completed: 0, total: calls.length });
          for (const c of calls) this.event({ type: 'tool_begin', id: c.id, name: c.name, args: c.args });
          pending = calls.length;
        }
      } else if (m.role === 'tool') {
        const text = m.content ?? '';
        const failed = text.startsWith('[tool failed:');
        this.event({
          type: 'tool_result',
          id: m.toolCallId ?? '',
          name: m.toolName ?? 'tool',
          content: text,
          outcome: failed ? 'failed' : 'ok',
        });
        if (pending && --pending === 0) this.closeBatch(true);
      }
    }
    if (pending) this.closeBatch(true);
    this.closeSegments();
  }
}
