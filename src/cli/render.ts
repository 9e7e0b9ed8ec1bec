// How headless runs show the agent's events. text: the reply on stdout, progress lines on stderr
// (so `clm -o … > f` captures just the answer); stream-json: one JSON line per event. The json
// format shows nothing until its one result object.

import { clip } from '../core/clip.js';
import type { AgentEvent } from '../core/events.js';
import { STREAM_JSON_VERSION } from './run-summary.js';
import { turnError } from './turn-error.js';

export interface Out {
  write(s: string): unknown;
}

const DIM = '\x1b[2m',
  RED = '\x1b[31m',
  YELLOW = '\x1b[33m',
  RESET = '\x1b[0m';

const TURN_FRAME: ReadonlySet<string> = new Set(['turn_start', 'state', 'compaction', 'turn_done']);

/**
 * The events a headless mode shows: the compaction of a resumed conversation before the first
 * prompt is start-up, not a turn of the user's — its state changes and turn end are left out
 * (its notices pass).
 */
export function hideResumeCompaction<E extends { type: string; origin?: unknown }>(show: (e: E) => void): (e: E) => void {
  let hidden = false;
  return (e) => {
    if (e.type === 'turn_start') hidden = e.origin === 'resume';
    if (hidden && TURN_FRAME.has(e.type)) {
      if (e.type === 'turn_done') hidden = false;
      return;
    }
    show(e);
  };
}

/** One line of tool arguments, clamped for display (saying how much was cut). */
export function oneLine(s: string, max = 200): string {
  return clip(s.replace(/[\r\n\t]+/g, ' '), max);
}

/** How a reply cut short says so. */
const CUT_SHORT = new Map<string, { color: string; text: string }>([
  ['length', { color: YELLOW, text: '[truncated: hit token limit]' }],
  ['content_filter', { color: RED, text: '[stopped: content filter]' }],
]);

/** A tool's result: its size when it went well, else the failure's first line, coloured. */
function resultLine(e: Extract<AgentEvent, { type: 'tool_result' }>, c: (code: string, s: string) => string): string {
  if (e.outcome === 'ok') return `[result: ${e.name}, ${Buffer.byteLength(e.content)} bytes]`;
  const timedOut = e.outcome === 'timedout';
  return c(timedOut ? YELLOW : RED, `[${timedOut ? 'timeout' : 'x'} ${e.name}] ${oneLine(e.content)}`);
}

export function textRenderer(stdout: Out, stderr: Out, color: boolean): { event(e: AgentEvent): void; endText(): void } {
  const c = (code: string, s: string) => (color ? `${code}${s}${RESET}` : s);
  let last = '\n';
  let reasoningOpen = false;
  const closeReasoning = () => {
    if (reasoningOpen) {
      stderr.write('\n');
      reasoningOpen = false;
    }
  };
  // Progress lines go to stderr; end an open reply line first so a terminal shows them apart.
  const err = (s: string) => {
    if (!last.endsWith('\n')) {
      stdout.write('\n');
      last = '\n';
    }
    stderr.write(s);
  };
  return {
    event(e) {
      switch (e.type) {
        case 'text':
          closeReasoning();
          stdout.write(e.text);
          last = e.text;
          return;
        case 'reasoning':
          if (e.text) {
            reasoningOpen = true;
            stderr.write(c(DIM, e.text));
          }
          return;
        case 'tool_begin':
          closeReasoning();
          err(`[tool: ${e.name} ${oneLine(e.args)}]\n`);
          return;
        case 'tool_result':
          err(`${resultLine(e, c)}\n`);
          return;
        case 'usage': {
          const u = e.usage;
          const rate = u.tokensPerSec ? `, ${u.tokensPerSec.toFixed(1)} tok/s` : '';
          err(`${c(DIM, `[${u.promptTokens}+${u.completionTokens} tok${rate}]`)}\n`);
          return;
        }
        case 'finish': {
          const why = CUT_SHORT.get(e.reason);
          if (why) err(`${c(why.color, why.text)}\n`);
          return;
        }
        case 'notice':
          err(`notice: ${e.text}\n`);
          return;
        case 'repair':
          err(c(DIM, `[${e.text}]`) + '\n');
          return;
        case 'turn_done':
          closeReasoning();
          if (e.status !== 0 && e.error) err(c(RED, `error: ${turnError(e.status, e.error)}`) + '\n');
          return;
        default:
      }
    },
    endText() {
      if (!last.endsWith('\n')) stdout.write('\n');
    },
  };
}

/** stream-json: the events a script reads, each as one line; `line` writes any other object (start, result). */
export function streamJsonRenderer(stdout: Out): { event(e: AgentEvent): void; line(o: Record<string, unknown>): void } {
  const line = (o: Record<string, unknown>) => {
    stdout.write(JSON.stringify({ version: STREAM_JSON_VERSION, ...o }) + '\n');
  };
  return {
    line,
    event(e) {
      switch (e.type) {
        case 'text':
          line({ type: 'text', text: e.text });
          return;
        case 'reasoning':
          if (e.text) line({ type: 'reasoning', text: e.text });
          return;
        case 'tool_begin':
          line({ type: 'tool_begin', id: e.id, name: e.name, args: e.args });
          return;
        case 'tool_result':
          line({ type: 'tool_result', id: e.id, name: e.name, outcome: e.outcome, content: e.content });
          return;
        case 'tool_batch':
          line({ type: 'tool_batch', done: e.completed, total: e.total });
          return;
        case 'usage': {
          const u = e.usage;
          line({
            type: 'usage',
            prompt_tokens: u.promptTokens,
            completion_tokens: u.completionTokens,
            total_tokens: u.totalTokens,
            tokens_per_sec: u.tokensPerSec > 0 ? u.tokensPerSec : null,
          });
          return;
        }
        case 'finish':
          line({ type: 'finish', reason: e.reason });
          return;
        case 'state':
          line({ type: 'state', state: e.state });
          return;
        case 'notice':
          line({ type: 'notice', text: e.text });
          return;
        case 'repair':
          line({ type: 'repair', text: e.text });
          return;
        default:
      }
    },
  };
}
