// The permission desk: the one place where the program decides tool calls and asks the person.
// Its hook is the agent's permission gate: each call goes to the engine (permissions/engine.ts);
// allowed and denied calls are settled at once; an asked one is queued for the person when one is
// present (a front end — the interactive UI, the REPL, a one-shot run on a terminal — has taken
// the desk), else follows `permissions.unattended` (run, as clm always has without a person, or
// deny). The front ends only draw the question (questionText) and bring the keys.
//
// Answers: (y) once, (s) for this session, (a) always, (n) deny, (d) never, Esc denies this and
// every queued question and cancels the turn. Session, always and never show the rules they add
// (proposeRules: `shell_exec(npm test *)`), each editable before it is kept: Enter keeps it, an
// emptied one is dropped, Esc goes back to the question. Always and never write them to the
// rules file. Once a rule is added, the queued questions it now decides are settled too.
//
// A key answers only as the first key of a run of typing that began after the question
// appeared (keys less than TYPING_GAP_MS apart are one run; Enter ends one): someone typing a
// prompt for later as a question appears cannot answer it by accident ("hello again": (a) at its
// seventh key).
//
// A call the sandbox refused (a write outside the writable roots, the network) may run outside
// it once: a question of its own (askOutside), `y` or `n`/Enter, where a front end that asks it
// has the desk (the UI, the REPL); no rule answers it and no answer is remembered.

import type { PermissionAnswer, PermissionCallInfo, PermissionHook } from '../core/types.js';
import { type PermissionEngine, proposeRules, type Ruling } from '../permissions/engine.js';
import { parseRule, type Rule, ruleText } from '../permissions/rule.js';
import { appendRule } from '../permissions/rules-file.js';
import type { OutsideQuestion } from '../sandbox/sandbox.js';
import { outsideText, questionText } from './permission-text.js';
import { monotonicMs } from '../host/monotonic.js';

export const TYPING_GAP_MS = 500;

export const ANSWER_KEYS = '(y) once  (s) session  (a) always  (n) deny  (d) never  [esc = deny+cancel]';
/** The keys of the question whether a call the sandbox refused may run outside it, this once. */
export const OUTSIDE_KEYS = '(y) yes, this once  (n) no (also Enter)  [esc = no+cancel]';

type Choice = 'once' | 'session' | 'always' | 'deny' | 'never';
const KEYS: Record<string, Choice> = { y: 'once', s: 'session', a: 'always', n: 'deny', d: 'never' };
const ECHO: Record<Choice, string> = {
  once: '-> allowed',
  session: '-> allowed for this session',
  always: '-> always allowed',
  deny: '-> denied',
  never: '-> always denied',
};

/** How a call was decided (the debug log, json and stream-json results). */
export interface Decided {
  allow: boolean;
  by: 'rule' | 'person' | 'default';
  /** The rule that decided, as written, and where it is. */
  rule?: string;
  source?: string;
  /** The person's answer. */
  answer?: Choice | 'cancel';
}

/** A key as the front end read it: a character typed, or a named key. */
export interface DeskKey {
  ch?: string;
  name?: 'enter' | 'escape' | 'backspace' | 'delete' | 'left' | 'right' | 'home' | 'end' | 'ctrl+u';
}

/** The heading of the rule being edited: which, how to keep it, what is wrong with it. */
export function editHead(e: Readonly<RuleEdit>): string {
  return `rule ${e.index + 1} of ${e.rules.length} (Enter keeps it, empty drops it, Esc goes back)${e.error ? ` [${e.error}]` : ''}: `;
}

/** A key that edits the draft: moves the cursor, deletes, or inserts what was typed. */
function editDraft(e: RuleEdit, k: DeskKey): void {
  const d = e.draft;
  const at = e.cursor;
  const moves: Partial<Record<NonNullable<DeskKey['name']>, number>> = { left: at - 1, right: at + 1, home: 0, end: d.length };
  const to = k.name ? moves[k.name] : undefined;
  if (to !== undefined) {
    e.cursor = Math.max(0, Math.min(d.length, to));
    return;
  }
  if (k.name === 'backspace' && at > 0) [e.draft, e.cursor] = [d.slice(0, at - 1) + d.slice(at), at - 1];
  else if (k.name === 'delete') e.draft = d.slice(0, at) + d.slice(at + 1);
  else if (k.name === 'ctrl+u') [e.draft, e.cursor] = [d.slice(at), 0];
  else if (!k.name && k.ch && !/[\x00-\x1f\x7f]/.test(k.ch)) [e.draft, e.cursor] = [d.slice(0, at) + k.ch + d.slice(at), at + k.ch.length];
}

/** The named keys the desk takes, by the names the front ends' key readers give them. */
export const DESK_KEY_NAMES: Readonly<Record<string, DeskKey['name']>> = {
  return: 'enter',
  enter: 'enter',
  escape: 'escape',
  backspace: 'backspace',
  delete: 'delete',
  left: 'left',
  right: 'right',
  home: 'home',
  end: 'end',
  'ctrl+u': 'ctrl+u',
};

export interface Question {
  readonly call: PermissionCallInfo;
  /** How the rules judged the call; null for the question whether a refused call may run outside the sandbox. */
  readonly ruling: Ruling | null;
  readonly text: string;
  /** The answer keys, as shown under the question. */
  readonly keys: string;
}

/** The rules an answer adds, while the person edits them. */
export interface RuleEdit {
  readonly choice: 'session' | 'always' | 'never';
  readonly rules: string[];
  index: number;
  draft: string;
  cursor: number;
  error: string | null;
}

export interface DeskFront {
  /** Whether the person is asked to run a call the sandbox refused outside it once (the UI, the REPL; not a one-shot run). */
  readonly asksOutside: boolean;
  /** What is asked changed (a question came or went, the rule being edited changed): draw again. */
  changed(): void;
  /** A question was answered: keep it with its echo where the person reads. */
  answered(question: string, echo: string): void;
  /** Esc: cancel the running turn. */
  cancelTurn(): void;
}

interface Pending extends Question {
  settle(a: PermissionAnswer): void;
  signal: AbortSignal;
}

export interface DeskOptions {
  engine: PermissionEngine;
  /** Where always/never answers are written; null: nowhere (they then hold for this session). */
  rulesFile: string | null;
  unattended?: 'allow' | 'deny';
  /** Secrets masked in what is shown. */
  mask?(s: string): string;
  /** How a call would run (`sandbox: …`), shown in the question. */
  sandbox?(call: PermissionCallInfo): string | null;
  /** Every decision, for the debug log. */
  log?(line: string): void;
  /** Every decision, for json and stream-json. */
  onDecided?(call: PermissionCallInfo, d: Decided): void;
}

export class PermissionDesk {
  readonly engine: PermissionEngine;
  /** The front end asking the person; null: nobody to ask. */
  front: DeskFront | null = null;
  private readonly queue: Pending[] = [];
  private edit: RuleEdit | null = null;
  /** When the questions now on screen began to show; a queue answered one by one keeps it. */
  shownAt = Number.POSITIVE_INFINITY;
  private lastKeyAt = Number.NEGATIVE_INFINITY;
  private runSince = Number.NEGATIVE_INFINITY;
  private runTyped = false;
  private runEnded = true;

  constructor(private readonly o: DeskOptions) {
    this.engine = o.engine;
  }

  /** The agent's permission hook. */
  readonly hook: PermissionHook = async (call, signal) => {
    let ruling: Ruling;
    try {
      ruling = await this.engine.judge({ tool: call.name, args: call.args, gated: call.gated });
    } catch (e) {
      // The parser could not be loaded: nothing is allowed that a rule would have to read.
      ruling = { call: { tool: call.name, args: call.args, gated: call.gated }, decision: 'ask', parts: [], rule: null };
      this.o.log?.(`[permission] ${call.name} ${call.id}: cannot judge (${(e as Error).message}); asked`);
    }
    this.o.log?.(
      `[permission] ${call.name} ${call.id}: ${ruling.decision} by ${ruling.rule ? `${ruleText(ruling.rule)} (${ruling.rule.source.label})` : 'default'}${ruling.parts.map((p) => `; ${p.decision} ${p.subject.kind}`).join('')}`,
    );
    if (ruling.decision !== 'ask') return this.byRule(call, ruling);
    if (!this.front) {
      const allow = (this.o.unattended ?? 'allow') === 'allow';
      this.decided(call, { allow, by: 'default' });
      return allow ? { allow } : { allow, reason: 'denied: nobody to ask (permissions.unattended = "deny")' };
    }
    if (signal.aborted) return { allow: false, reason: 'cancelled' };
    const text = await questionText(call, ruling, { mask: (s) => this.o.mask?.(s) ?? s, sandbox: this.o.sandbox?.(call) });
    if (signal.aborted) return { allow: false, reason: 'cancelled' };
    // Rules added while the question was being written may decide it now.
    const again = this.rejudge(call, ruling);
    if (again) return again;
    return new Promise<PermissionAnswer>((resolve) => {
      this.enqueue({ call, ruling, text, keys: ANSWER_KEYS, signal, settle: resolve });
    });
  };

  /**
   * Whether a call the sandbox refused may run outside it, this once (the sandbox's askOutside):
   * a question of its own, asked only where a person is and the front end asks it (not in a
   * one-shot run); never decided by a rule nor remembered, and no rule comes of it.
   */
  readonly askOutside = (q: OutsideQuestion, signal: AbortSignal): Promise<boolean> => {
    const call = { id: q.id ?? '', name: q.name, args: q.args, gated: true };
    const say = (answer: string) => this.o.log?.(`[permission] ${call.name} ${call.id}: outside the sandbox once: ${answer}`);
    if (!this.front?.asksOutside || signal.aborted) {
      say(`not asked (${this.front ? 'a one-shot run' : 'nobody to ask'}); stays refused`);
      return Promise.resolve(false);
    }
    const text = outsideText(q, (s) => this.o.mask?.(s) ?? s);
    return new Promise<boolean>((resolve) => {
      this.enqueue({
        call,
        ruling: null,
        text,
        keys: OUTSIDE_KEYS,
        signal,
        settle: (a) => {
          say(a.allow ? 'allowed by the person' : 'refused');
          resolve(a.allow);
        },
      });
    });
  };

  private enqueue(p: Pending): void {
    if (!this.queue.length) this.shownAt = monotonicMs();
    this.queue.push(p);
    p.signal.addEventListener('abort', () => this.withdraw(p), { once: true });
    this.front?.changed();
  }

  private decided(call: PermissionCallInfo, d: Decided): void {
    this.o.onDecided?.(call, d);
    if (d.by !== 'rule')
      this.o.log?.(
        `[permission] ${call.name} ${call.id}: ${d.allow ? 'allowed' : 'denied'} by ${d.by === 'person' ? `the person (${d.answer})` : 'default'}`,
      );
  }

  /** A settled answer for `call` when the rules in force now decide it (rules were added since `before`), else null. */
  private rejudge(call: PermissionCallInfo, before: Ruling): PermissionAnswer | null {
    const ruling = this.engine.judgeSubjects(
      before.call,
      before.parts.map((p) => p.subject),
    );
    if (ruling.decision === 'ask') return null;
    return this.byRule(call, ruling);
  }

  /** The answer a rule (or the default) gives, recorded. */
  private byRule(call: PermissionCallInfo, ruling: Ruling): PermissionAnswer {
    const rule = ruling.rule ? { rule: ruleText(ruling.rule), source: ruling.rule.source.label } : {};
    const allow = ruling.decision === 'allow';
    this.decided(call, { allow, by: ruling.rule ? 'rule' : 'default', ...rule });
    if (allow) return { allow };
    if (!ruling.rule) return { allow, reason: 'denied' };
    // --deny-tools and --allow-tools keep their words.
    if (ruling.rule.source.kind === 'flag') return { allow, reason: `denied by policy (${ruling.rule.source.label})` };
    return { allow, reason: `denied by rule ${rule.rule} (${rule.source})` };
  }

  private withdraw(p: Pending): void {
    const i = this.queue.indexOf(p);
    if (i < 0) return;
    this.queue.splice(i, 1);
    if (i === 0) this.edit = null;
    p.settle({ allow: false, reason: 'cancelled' });
    this.front?.changed();
  }

  /** The question asked now. */
  get current(): Question | null {
    return this.queue[0] ?? null;
  }

  /** The rules being edited for the current question's answer. */
  get editing(): Readonly<RuleEdit> | null {
    return this.edit;
  }

  get waiting(): number {
    return Math.max(0, this.queue.length - 1);
  }

  get active(): boolean {
    return this.queue.length > 0;
  }

  /** A key was pressed (any key, asked or not): the runs of typing are counted from these. */
  press(now: number): void {
    if (this.runEnded || now - this.lastKeyAt >= TYPING_GAP_MS) {
      this.runSince = now;
      this.runEnded = false;
      this.runTyped = false;
    }
    this.lastKeyAt = now;
  }

  /** A key of this run went elsewhere (into the input): the run is typing, not answering. */
  typed(): void {
    this.runTyped = true;
  }

  /** Enter: the run of typing ends. */
  endRun(): void {
    this.runEnded = true;
  }

  /** Whether a key of the current run may answer the question on screen. */
  private mayAnswer(): boolean {
    return !this.runTyped && this.runSince >= this.shownAt;
  }

  /** A key while a question is asked (after press()); whether the desk took it. */
  key(k: DeskKey): boolean {
    const q = this.queue[0];
    if (!q) return false;
    if (this.edit) return this.editKey(k);
    if (k.name === 'escape') {
      this.cancel();
      return true;
    }
    if (!q.ruling) return this.outsideKey(k);
    if (k.ch?.length !== 1 || !this.mayAnswer()) return false;
    const choice = KEYS[k.ch.toLowerCase()];
    if (!choice) return false;
    if (choice === 'session' || choice === 'always' || choice === 'never') {
      const rules = proposeRules(q.ruling, choice === 'never' ? 'deny' : 'allow').map(ruleText);
      if (rules.length) {
        this.edit = { choice, rules, index: 0, draft: rules[0]!, cursor: rules[0]!.length, error: null };
        this.front?.changed();
        return true;
      }
    }
    this.finish(choice, []);
    return true;
  }

  /** A key for the question whether a refused call may run outside the sandbox: y, else n or Enter (no). */
  private outsideKey(k: DeskKey): boolean {
    if (!this.mayAnswer()) return false;
    const ch = k.ch?.length === 1 ? k.ch.toLowerCase() : '';
    if (ch !== 'y' && ch !== 'n' && k.name !== 'enter') return false;
    const q = this.queue.shift()!;
    const allow = ch === 'y';
    this.front?.answered(q.text, allow ? '-> runs outside the sandbox, this once' : '-> stays refused');
    q.settle({ allow });
    this.front?.changed();
    return true;
  }

  private editKey(k: DeskKey): boolean {
    const e = this.edit!;
    if (k.name === 'escape') this.edit = null;
    else if (k.name === 'enter') {
      if (this.keepRule(e)) return true;
    } else editDraft(e, k);
    this.front?.changed();
    return true;
  }

  /** Enter on the rule being edited: kept (or dropped when emptied), then the next; whether the answer is done. */
  private keepRule(e: RuleEdit): boolean {
    const text = e.draft.trim();
    const r = text ? parseRule(text) : null;
    if (typeof r === 'string') {
      e.error = r;
      return false;
    }
    e.rules[e.index] = text;
    e.index++;
    if (e.index < e.rules.length) {
      e.draft = e.rules[e.index]!;
      e.cursor = e.draft.length;
      e.error = null;
      return false;
    }
    this.edit = null;
    this.finish(e.choice, e.rules.filter(Boolean));
    return true;
  }

  /** Add `rules` for this session, or saved to the rules file (kept for the session when that fails). */
  private addRules(rules: string[], effect: 'allow' | 'deny', session: boolean): { kept: string[]; problem: string } {
    const kept: string[] = [];
    let problem = '';
    for (const text of rules) {
      const r = parseRule(text);
      if (typeof r === 'string') continue;
      let rule: Rule = { effect, ...r, source: { kind: 'session', label: 'this session' } };
      if (!session && this.o.rulesFile) {
        try {
          rule = appendRule(this.o.rulesFile, effect, r);
        } catch (e) {
          problem = ` (not saved: ${(e as Error).message}; kept for this session)`;
        }
      }
      this.engine.add(rule);
      kept.push(ruleText(rule));
    }
    return { kept, problem };
  }

  /** Answer the current question with `choice`, adding `rules` (session, always, never). */
  private finish(choice: Choice, rules: string[]): void {
    const q = this.queue.shift();
    if (!q) return;
    const allow = choice === 'once' || choice === 'session' || choice === 'always';
    const { kept, problem } = this.addRules(rules, allow ? 'allow' : 'deny', choice === 'session');
    const where = choice === 'session' || !this.o.rulesFile ? '' : ` in ${this.o.rulesFile}`;
    const added = kept.length ? `: ${allow ? 'allow' : 'deny'} ${kept.join(', ')}${where}${problem}` : '';
    this.front?.answered(q.text, `${ECHO[choice]}${added}`);
    this.decided(q.call, { allow, by: 'person', answer: choice });
    q.settle(allow ? { allow } : { allow, reason: 'denied by user' });
    // The queued questions the new rules decide are settled before the next one shows.
    if (kept.length) this.settleDecided();
    this.front?.changed();
  }

  /** Queued questions the rules in force now decide are settled. */
  private settleDecided(): void {
    for (const p of [...this.queue]) {
      const a = p.ruling && this.rejudge(p.call, p.ruling);
      if (!a) continue;
      this.queue.splice(this.queue.indexOf(p), 1);
      this.front?.answered(p.text, a.allow ? '-> allowed (by the rule just added)' : '-> denied (by the rule just added)');
      p.settle(a);
    }
  }

  /** Esc or Ctrl-C: deny this and every queued question, and cancel the turn. */
  cancel(): void {
    const all = this.queue.splice(0);
    this.edit = null;
    if (!all.length) return;
    this.front?.answered(all[0]!.text, '-> denied (cancelled)');
    this.front?.changed();
    // Cancel first: the denials then find their calls resolved, and nothing more is asked.
    this.front?.cancelTurn();
    for (const p of all) {
      if (p.ruling) this.decided(p.call, { allow: false, by: 'person', answer: 'cancel' });
      p.settle({ allow: false, reason: 'denied by user' });
    }
  }

  /** The turn ended: nothing more is asked for it. */
  turnEnded(): void {
    if (!this.queue.length) return;
    const all = this.queue.splice(0);
    this.edit = null;
    for (const p of all) p.settle({ allow: false, reason: 'cancelled' });
    this.front?.changed();
  }
}
