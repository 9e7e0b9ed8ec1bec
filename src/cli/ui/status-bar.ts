// The one-row status bar, as the original draws it:
//
//    clm [provider/model:agent] [online] [sandbox: workspace-write]  | thinking  [██████░░░░] 60%  ^R reasoning …
//
// connection state, the sandbox mode in force, a spinner while busy, one piece of information
// (rate-limit wait > tool progress > speed > state), the context gauge when the context size is
// known (what the last request held, or an estimate of what the next one holds), and the key hints
// right-aligned when they fit. Black on blue.

import type { AgentState } from '../../core/types.js';
import { paint } from '../../tui/style.js';
import { textWidth } from '../../tui/width.js';
import { padEnd, truncate } from '../../tui/wrap.js';
import { THEME } from './theme.js';

export type ConnectionView = 'connecting' | 'online' | 'offline';

export interface StatusState {
  provider?: string;
  model?: string;
  agent?: string;
  connection: ConnectionView;
  detail: string | null;
  /** The sandbox mode in force (read-only, workspace-write, full, unavailable); undefined until known. */
  sandbox?: string;
  /** The MCP servers that need a login (their tools are not offered until then). */
  mcpLogin?: readonly string[];
  busy: boolean;
  /** Spinner ticks (advanced only while busy). */
  tick: number;
  /** The agent's state, or that the last turn was cancelled (the agent then reports it complete). */
  state: AgentState | 'cancelled';
  /** The tool round in progress, if any. */
  batch: { completed: number; total: number } | null;
  /** The speed of the last reply (0: unknown). */
  tokensPerSec: number;
  ctxUsed: number;
  ctxMax: number;
  /** Key hints for the right end (they differ between the screen modes). */
  hints: string;
  /** Full screen, scrolled up: transcript lines below the view. */
  linesBelow: number;
  unicode: boolean;
}

const SPINNER = ['|', '/', '-', '\\'];
const LABELS: Record<StatusState['state'], string> = {
  idle: 'idle',
  thinking: 'thinking',
  calling_tool: 'tool',
  rate_limited: 'waiting',
  complete: 'done',
  error: 'error',
  cancelled: 'cancelled',
};

/** `[provider/model:agent]` with the missing parts left out ('' when all are). */
export function identity(s: Pick<StatusState, 'provider' | 'model' | 'agent'>): string {
  let id = s.provider ?? '';
  if (s.model) id += id ? `/${s.model}` : s.model;
  if (s.agent) id += id ? `:${s.agent}` : s.agent;
  return id ? `[${id}]` : '';
}

export function connectionText(s: Pick<StatusState, 'connection' | 'detail'>): string {
  if (s.connection === 'offline') return s.detail ? `[offline: ${s.detail.replace(/[\r\n\t]+/g, ' ')}]` : '[offline]';
  return `[${s.connection}]`;
}

/** The information slot: rate-limit wait, tools i/n, N tok/s (unless the turn was cancelled), or the state. */
export function infoText(s: Pick<StatusState, 'state' | 'tick' | 'batch' | 'tokensPerSec'>): string {
  if (s.state === 'rate_limited') return `waiting${'.'.repeat(1 + (Math.floor(s.tick / 4) % 3))}`;
  if (s.batch && s.batch.completed < s.batch.total) return `tools ${s.batch.completed}/${s.batch.total}`;
  if (s.tokensPerSec > 0 && s.state !== 'cancelled') return `${s.tokensPerSec.toFixed(1)} tok/s`;
  return LABELS[s.state] ?? s.state;
}

/** `[██████░░░░] 60%` (ASCII `[######....]` off UTF-8), or '' while the context use is unknown. */
export function gauge(used: number, max: number, unicode: boolean): string {
  if (!(max > 0) || !(used > 0)) return '';
  const pct = Math.min(100, Math.round((used * 100) / max));
  const cells = Math.min(10, Math.round(pct / 10));
  const [full, empty] = unicode ? ['\u2588', '\u2591'] : ['#', '.'];
  return `[${full.repeat(cells)}${empty.repeat(10 - cells)}] ${pct}%`;
}

/** ` clm [identity] [connection] [sandbox: mode] [mcp: NAME needs login]`: what runs where. */
function whereText(s: StatusState): string {
  let left = ' clm';
  const id = identity(s);
  if (id) left += ` ${id}`;
  left += ` ${connectionText(s)}`;
  if (s.sandbox) left += ` [sandbox: ${s.sandbox}]`;
  if (s.mcpLogin?.length) left += ` [mcp: ${s.mcpLogin.join(', ')} need${s.mcpLogin.length === 1 ? 's' : ''} login]`;
  return left;
}

/** The bar's text, exactly `width` columns, unstyled. */
export function statusText(s: StatusState, width: number): string {
  const spin = s.busy ? SPINNER[s.tick % 4]! : ' ';
  let left = `${whereText(s)}  ${spin} ${infoText(s).padEnd(14)}`;
  const g = gauge(s.ctxUsed, s.ctxMax, s.unicode);
  if (g) left += ` ${g}`;
  const lw = textWidth(left);
  const beside = (right: string) => left + ' '.repeat(width - lw - textWidth(right)) + right;
  if (s.linesBelow > 0) {
    // Scrolled up: that there is more below matters more than the end of the left side, so a
    // narrow bar says it shorter, and then cuts the left side for it.
    // Infinity: not counted yet (a long transcript being laid out again after a resize).
    const n = Number.isFinite(s.linesBelow) ? `${s.linesBelow} ` : '';
    const forms = [`${n}more below: End `, `${n || 'more '}below `];
    for (const r of forms) if (lw + 2 + textWidth(r) <= width) return beside(r);
    const r = forms[1]!;
    if (textWidth(r) + 4 <= width) return padEnd(truncate(left, width - textWidth(r) - 1), width - textWidth(r)) + r;
  } else if (s.hints && lw + 2 + textWidth(s.hints) <= width) return beside(s.hints);
  return padEnd(truncate(left, width), width);
}

export function statusLine(s: StatusState, width: number): string {
  return paint(statusText(s, width), THEME.status);
}
