// What the headless REPL prints: the agent's events as `assistant> ` text, tool, usage and finish
// lines, and a resumed conversation as it was shown. It keeps track of where the cursor is, so a
// line of its own never starts in the middle of a reply.

import { CONTEXT_UPDATE_PREFIX } from '../core/history.js';
import { cancelledReplyText } from '../core/cancelled-reply.js';
import { ECANCELED } from '../core/errors.js';
import type { AgentEvent } from '../core/events.js';
import type { AssistantMessage, FinishReason, Message, ToolOutcome, ToolResultMessage, Usage } from '../core/types.js';
import { typedPart } from './file-mentions.js';
import { printableName } from './guard.js';
import { oneLine, type Out } from './render.js';
import { turnError } from './turn-error.js';

const DIM = '\x1b[2m',
  RED = '\x1b[31m',
  YELLOW = '\x1b[33m',
  RESET = '\x1b[0m';

const nl = (t: string) => (t.endsWith('\n') ? t : `${t}\n`);

export class ReplOutput {
  /** The cursor is at the start of a line. */
  atLineStart = true;
  /** `assistant> ` has been written for the reply being streamed. */
  private assistantOpen = false;

  constructor(
    private readonly stdout: Out,
    private readonly stderr: Out,
    private readonly color: boolean,
  ) {}

  write(s: string): void {
    if (!s) return;
    this.stdout.write(s);
    this.atLineStart = s.endsWith('\n');
  }

  /** Ends the line the cursor is on, if it is not at the start of one. */
  newline(): void {
    if (!this.atLineStart) this.write('\n');
  }

  private c(code: string, s: string): string {
    return this.color ? `${code}${s}${RESET}` : s;
  }

  event(e: AgentEvent): void {
    switch (e.type) {
      case 'text':
        this.text(e.text);
        return;
      case 'reasoning':
        if (e.text) this.write(this.c(DIM, e.text));
        return;
      case 'tool_begin':
        this.newline();
        this.assistantOpen = false;
        this.write(`[tool: ${e.name} ${oneLine(e.args)}]\n`);
        return;
      case 'tool_result':
        this.toolResult(e.name, e.content, e.outcome);
        return;
      case 'tool_batch':
        if (e.total > 1 && e.completed > 0) this.write(`[tools ${e.completed}/${e.total}]\n`);
        return;
      case 'usage':
        this.usage(e.usage);
        return;
      case 'finish':
        this.finish(e.reason);
        return;
      case 'notice':
        this.stderr.write(`notice: ${e.text}\n`);
        return;
      case 'repair':
        this.newline();
        this.assistantOpen = false;
        this.write(`${this.c(DIM, `[${e.text}]`)}\n`);
        return;
      case 'turn_done':
        this.turnDone(e.status, e.error);
        return;
      default:
    }
  }

  private text(text: string): void {
    if (!this.assistantOpen) {
      this.newline();
      this.write('assistant> ');
      this.assistantOpen = true;
    }
    this.write(text);
  }

  private toolResult(name: string, content: string, outcome: ToolOutcome): void {
    this.newline();
    if (outcome === 'ok') {
      this.write(`[result: ${name}]\n${nl(content)}`);
      return;
    }
    const timedOut = outcome === 'timedout';
    this.write(`${this.c(timedOut ? YELLOW : RED, `[${timedOut ? 'timeout' : 'x'} ${name}] ${content}`)}\n`);
  }

  private usage(u: Usage): void {
    this.newline();
    const rate = u.tokensPerSec ? `, ${u.tokensPerSec.toFixed(1)} tok/s` : '';
    this.write(`${this.c(DIM, `[${u.promptTokens}+${u.completionTokens} tok${rate}]`)}\n`);
  }

  private finish(reason: FinishReason): void {
    if (reason === 'length') {
      this.newline();
      this.write(`${this.c(YELLOW, '[truncated: hit token limit]')}\n`);
    }
    if (reason === 'content_filter') {
      this.newline();
      this.write(`${this.c(RED, '[stopped: content filter]')}\n`);
    }
  }

  private turnDone(status: number, error: string | undefined): void {
    if (status === ECANCELED) {
      this.newline();
      this.write(`${this.c(YELLOW, '[cancelled]')}\n`);
    } else if (status !== 0 && error) this.stderr.write(`error: ${turnError(status, error)}\n`);
    this.assistantOpen = false;
  }

  /** A resumed conversation as the REPL would have shown it (tool results in full, as it does); `clean` makes text safe to show. */
  replay(messages: readonly Message[], clean: (s: string) => string): void {
    const w = (s: string) => this.write(clean(s));
    for (const m of messages) {
      if (m.role === 'user' && m.content && !m.content.startsWith(CONTEXT_UPDATE_PREFIX)) w(`user> ${nl(typedPart(m.content))}`);
      else if (m.role === 'assistant') replayReply(m, w);
      else if (m.role === 'tool') replayResult(m, w);
    }
  }
}

/** A reply: its text (a cancelled one's as it was shown, then `[cancelled]`), then its calls. */
function replayReply(m: AssistantMessage, w: (s: string) => void): void {
  const cut = cancelledReplyText(m);
  const text = cut ?? m.content;
  if (text) w(`assistant> ${nl(text)}`);
  if (cut !== null) w('[cancelled]\n');
  for (const c of m.toolCalls ?? []) w(`[tool: ${printableName(c.name)} ${oneLine(c.args)}]\n`);
}

function replayResult(m: ToolResultMessage, w: (s: string) => void): void {
  const name = printableName(m.toolName ?? 'tool');
  const text = m.content ?? '';
  if (text.startsWith('[tool failed:')) w(`[x ${name}] ${nl(text)}`);
  else w(`[result: ${name}]\n${nl(text)}`);
}
