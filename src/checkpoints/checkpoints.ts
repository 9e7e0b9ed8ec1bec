// The checkpoints of one session: a record per turn (its prompt, where the conversation stood,
// the workspace before and after it), kept in `<state>/checkpoints/sessions/<id>.json`, and what
// the front ends ask of them: the turns, what one changed (`diff`), what going back to before one
// would do (`plan`), and doing it (`apply`). The conversation half of a rewind belongs to the
// caller (the agent's history, the session file); `messages` of a turn says where it stood.

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyPlan, type RestoreResult } from './restore.js';
import { describeChanges, type FileChange, octal } from './changes.js';
import { GitAborted, gitAvailable, GitTimeout } from './git.js';
import { ScanTooLarge } from './scan.js';
import { DEFAULT_CHECKPOINT_SETTINGS, type CheckpointSettings } from './settings.js';
import { repoDirFor, ShadowRepo, type Snapshot } from './shadow-repo.js';
import { planUndo, type UndoPlan } from './undo-plan.js';

export interface TurnRecord {
  /** 1, 2, … in the order the session's turns started. */
  turn: number;
  /** The prompt (at most PROMPT_CHARS characters). */
  prompt: string;
  /** When the turn started (ms since the epoch). */
  at: number;
  /** Messages of the conversation before the turn (as the session file counts them). */
  messages: number;
  /** The workspace before the turn's first tool that may change files; absent: no such tool ran. */
  before?: Snapshot;
  /** The workspace when the turn ended. */
  after?: Snapshot;
  /** Files and directories the turn changed (known once it ended). */
  files?: number;
  /** The turn changed nothing: its snapshots' tree is kept by the refs of this earlier turn, it has none of its own. */
  keptBy?: number;
}

interface RecordFile {
  v: 1;
  workspace: string;
  /** The shadow repository; "" until a snapshot needs it (a session of turns without tools names none). */
  repo: string;
  turns: TurnRecord[];
}

export interface TurnDiff {
  turn: TurnRecord;
  changes: FileChange[];
  /** A unified diff, file by file (git's format; permission changes git does not see as `mode` lines first). */
  text: string;
}

/** Going back to before `from`: every turn from it on is taken back. */
export interface Rewind {
  from: TurnRecord;
  turns: TurnRecord[];
  plan: UndoPlan;
  /** Whether any of the turns has a snapshot (else only the conversation can go back). */
  files: boolean;
}

export interface CheckpointsOptions {
  /** clm's state directory (where sessions live). */
  stateDir: string;
  sessionId: string;
  /** The directory the checkpoints cover (see workspaceRoot). */
  workspace: string;
  settings?: Partial<CheckpointSettings>;
  /** How a checkpoint problem is reported (once per kind). */
  notice?(text: string): void;
}

export const PROMPT_CHARS = 200;

export class CheckpointError extends Error {}

export function recordPath(stateDir: string, sessionId: string): string {
  return join(stateDir, 'checkpoints', 'sessions', `${sessionId}.json`);
}

export class Checkpoints {
  readonly settings: CheckpointSettings;
  readonly #o: CheckpointsOptions;
  readonly #record: RecordFile;
  #repo: Promise<ShadowRepo> | null = null;
  /** Snapshots are off for this session (no git, too large a workspace); said once. */
  #off: string | null = null;
  #current: TurnRecord | null = null;
  /** The current turn's "before" snapshot, once asked for. */
  #before: Promise<void> | null = null;
  /** The snapshot taken ahead of the first "before" (warm), once started. */
  #warm: Promise<void> | null = null;
  readonly #said = new Set<string>();

  constructor(o: CheckpointsOptions, record?: RecordFile) {
    this.#o = o;
    this.settings = { ...DEFAULT_CHECKPOINT_SETTINGS, ...o.settings };
    this.#record = record ?? { v: 1, workspace: o.workspace, repo: '', turns: [] };
    if (!this.settings.enabled) this.#off = 'off';
  }

  /** The checkpoints a session left (for `clm undo ID`); null when it has none. */
  static open(
    stateDir: string,
    sessionId: string,
    settings?: Partial<CheckpointSettings>,
    notice?: (text: string) => void,
  ): Checkpoints | null {
    const file = recordPath(stateDir, sessionId);
    if (!existsSync(file)) return null;
    let rec: RecordFile;
    try {
      rec = JSON.parse(readFileSync(file, 'utf8')) as RecordFile;
      if (rec.v !== 1 || !Array.isArray(rec.turns) || typeof rec.workspace !== 'string') throw new Error('unknown format');
    } catch (e) {
      throw new CheckpointError(`the checkpoints of session ${sessionId} cannot be read: ${(e as Error).message}`);
    }
    return new Checkpoints({ stateDir, sessionId, workspace: rec.workspace, settings, notice }, rec);
  }

  get sessionId(): string {
    return this.#o.sessionId;
  }
  get workspace(): string {
    return this.#record.workspace;
  }
  get turns(): readonly TurnRecord[] {
    return this.#record.turns;
  }
  /** Why snapshots are off, or null. */
  get off(): string | null {
    return this.#off;
  }

  #say(key: string, text: string): void {
    if (this.#said.has(key)) return;
    this.#said.add(key);
    this.#o.notice?.(text);
  }

  /** The shadow repository's directory, named when first needed (naming it hashes the workspace). */
  #repoDir(): string {
    this.#record.repo ||= repoDirFor(this.#o.stateDir, this.#record.workspace);
    return this.#record.repo;
  }

  #openRepo(): Promise<ShadowRepo> {
    this.#repo ??= ShadowRepo.open({
      dir: this.#repoDir(),
      workspace: this.#record.workspace,
      sessionId: this.#o.sessionId,
      timeoutMs: this.settings.gitTimeoutMs,
    });
    return this.#repo;
  }

  #scanOptions() {
    return {
      gitignore: this.settings.gitignore,
      maxFileBytes: this.settings.maxFileBytes,
      maxEntries: this.settings.maxFiles,
      skip: [this.#o.stateDir],
    };
  }

  async #snapshot(): Promise<Snapshot> {
    const repo = await this.#openRepo();
    const s = await repo.snapshot(this.#scanOptions());
    if (s.leftOut.length) {
      const list = s.leftOut.map((l) => `${l.path} (${l.why})`);
      const shown = list.slice(0, 5).join(', ') + (list.length > 5 ? `, and ${list.length - 5} more` : '');
      this.#say(`left:${list.join('\n')}`, `checkpoints leave out ${list.length} file${list.length === 1 ? '' : 's'}: ${shown}`);
    }
    return { tree: s.tree, manifest: s.manifest };
  }

  // ---- recording turns -------------------------------------------------------------------

  /** A turn starts; `messages` is the length of the conversation before it. */
  beginTurn(prompt: string, messages: number): void {
    const turns = this.#record.turns;
    const turn: TurnRecord = { turn: (turns.at(-1)?.turn ?? 0) + 1, prompt: prompt.slice(0, PROMPT_CHARS), at: Date.now(), messages };
    turns.push(turn);
    this.#current = turn;
    this.#before = null;
  }

  /**
   * A snapshot ahead of the first "before" one (a workspace never seen takes seconds), recorded
   * nowhere: the "before" snapshot then reads and stores only what changed since, the changes
   * made while this one ran included (the watch and the stat comparison see them). Never rejects.
   */
  warm(): Promise<void> {
    if (!this.#warm && !this.#off && gitAvailable())
      // A failure here is said by the "before" snapshot, which tries again, if a tool comes at all.
      this.#warm = this.#guard(async () => {
        await (await this.#openRepo()).snapshot(this.#scanOptions());
      }, true);
    return this.#warm ?? Promise.resolve();
  }

  /** Before the turn's first tool that may change files: the workspace as it is (once per turn). Never rejects; a failure is a notice. */
  beforeChanges(): Promise<void> {
    const turn = this.#current;
    if (!turn || this.#off) return Promise.resolve();
    this.#before ??= this.#guard(async () => {
      if (!this.#checkGit()) return;
      turn.before = await this.#snapshot();
      // On disk at once: another session's pruning keeps what a record names.
      this.save();
    });
    return this.#before;
  }

  /** The turn ended: the workspace as it left it, the record written, old snapshots pruned. Never rejects. */
  async endTurn(): Promise<void> {
    const turn = this.#current;
    if (!turn) return;
    this.#current = null;
    await this.#before;
    if (turn.before && !this.#off) {
      await this.#guard(async () => {
        turn.after = await this.#snapshot();
        const repo = await this.#openRepo();
        turn.files = (await this.#changes(repo, turn.before!, turn.after)).length;
        // A turn that changed nothing writes nothing: an earlier turn's refs keep its tree.
        const holder = turn.after.tree === turn.before!.tree ? this.#holderOf(turn) : undefined;
        if (holder) turn.keptBy = holder.turn;
        else await repo.setRefs(this.#refsOf(turn));
        await this.#pruneTurns(repo);
      });
    }
    this.save();
  }

  #ref(t: TurnRecord, which: 'before' | 'after'): string {
    return `refs/clm/${this.#o.sessionId}/${t.turn}/${which}`;
  }

  /** The refs that keep the trees of `t`'s snapshots. */
  #refsOf(t: TurnRecord): { ref: string; tree: string }[] {
    const out = t.before ? [{ ref: this.#ref(t, 'before'), tree: t.before.tree }] : [];
    if (t.after) out.push({ ref: this.#ref(t, 'after'), tree: t.after.tree });
    return out;
  }

  /** The latest turn before `t` whose own refs keep the tree of `t`'s "before". */
  #holderOf(t: TurnRecord): TurnRecord | undefined {
    const tree = t.before?.tree;
    const h = this.#record.turns.findLast((x) => x !== t && x.before && x.keptBy === undefined);
    return h && (h.before!.tree === tree || h.after?.tree === tree) ? h : undefined;
  }

  #checkGit(): boolean {
    if (gitAvailable()) return true;
    this.#off = 'git is not installed';
    this.#say('git', 'checkpoints are off: git is not installed (undo, rewind and diff of files need it)');
    return false;
  }

  async #guard(f: () => Promise<void>, quiet = false): Promise<void> {
    try {
      await f();
    } catch (e) {
      // Stopped by close(): nothing went wrong.
      if (e instanceof GitAborted) return;
      if (e instanceof ScanTooLarge) {
        this.#off = 'the workspace is too large';
        this.#say('large', `checkpoints are off for this session: the workspace ${this.#record.workspace} has ${e.message}`);
        return;
      }
      if (e instanceof GitTimeout) {
        // Every later turn would wait as long again before its tools run.
        this.#off = 'a snapshot takes too long';
        this.#say('slow', `checkpoints are off for this session: ${e.message} (checkpoints.git_timeout_ms)`);
        return;
      }
      if (!quiet) this.#say(`err:${(e as Error).message}`, `checkpoint failed: ${(e as Error).message}`);
    }
  }

  /** Turns beyond `keep` lose their snapshots, oldest first; turns that changed nothing go with the turn that keeps their tree. */
  async #pruneTurns(repo: ShadowRepo): Promise<void> {
    const own = this.#record.turns.filter((t) => t.before && t.keptBy === undefined);
    const drop = new Set(own.slice(0, Math.max(0, own.length - this.settings.keep)).map((t) => t.turn));
    if (!drop.size) return;
    for (const t of this.#record.turns) if (drop.has(t.turn) || (t.keptBy !== undefined && drop.has(t.keptBy))) dropSnapshots(t);
    await repo.setRefs(
      [],
      [...drop].map((n) => `refs/clm/${this.#o.sessionId}/${n}/`),
    );
    this.#pruneManifests(repo);
  }

  /** The manifests no turn of any session of this repository names any more leave it. */
  #pruneManifests(repo: ShadowRepo): void {
    const keep = new Set<string>();
    const others = sessionsOf(this.#o.stateDir, this.#repoDir()).filter((s) => s !== this.#o.sessionId);
    for (const cp of [this, ...others.map((s) => Checkpoints.open(this.#o.stateDir, s))])
      for (const t of cp?.turns ?? []) for (const snap of [t.before, t.after]) if (snap) keep.add(snap.manifest);
    repo.pruneManifests(keep);
  }

  /** Write the record (atomically). */
  save(): void {
    const file = recordPath(this.#o.stateDir, this.#o.sessionId);
    try {
      mkdirSync(join(this.#o.stateDir, 'checkpoints', 'sessions'), { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(this.#record), { mode: 0o600 });
      renameSync(tmp, file);
    } catch (e) {
      this.#say('save', `checkpoints cannot be saved: ${(e as Error).message}`);
    }
  }

  /** The session ends: the shadow repository pruned to its size cap, oldest sessions' snapshots first. */
  async close(): Promise<void> {
    if (!this.#repo) return;
    const opened = this.#repo;
    // Its watch stops here (and a warm snapshot still under way): a snapshot after this opens the
    // repository again and walks the workspace.
    this.#repo = null;
    this.#warm = null;
    await this.#guard(async () => {
      // A repository that could not be opened was said by the snapshot that needed it, if any.
      const repo = await opened.catch(() => null);
      if (!repo) return;
      repo.close();
      if ((await repo.size()) <= this.settings.maxBytes) return;
      await this.#dropOldest(repo);
      this.#pruneManifests(repo);
    });
  }

  /** Sessions lose their snapshots, oldest first (this one all but its last turn), until the repository fits its cap. */
  async #dropOldest(repo: ShadowRepo): Promise<void> {
    for (const s of sessionsOf(this.#o.stateDir, this.#repoDir())) {
      const other = s === this.#o.sessionId ? this : Checkpoints.open(this.#o.stateDir, s);
      if (!other) continue;
      const last = s === this.#o.sessionId ? other.#record.turns.findLast((t) => t.before) : undefined;
      for (const t of other.#record.turns) if (t !== last) dropSnapshots(t);
      if (last) last.keptBy = undefined;
      other.save();
      await repo.setRefs([], [`refs/clm/${s}/`]);
      if (last) await repo.setRefs(this.#refsOf(last));
      if ((await repo.prune()) <= this.settings.maxBytes) return;
    }
  }

  // ---- reading them ----------------------------------------------------------------------

  #turn(n: number): TurnRecord {
    const t = this.#record.turns.find((x) => x.turn === n);
    if (!t) throw new CheckpointError(`no turn ${n} in this session`);
    return t;
  }

  /** The "after" of a turn: its own, else the next turn's "before", else null (the workspace now). */
  #afterOf(t: TurnRecord): Snapshot | null {
    if (t.after) return t.after;
    const next = this.#record.turns.find((x) => x.turn > t.turn && x.before);
    return next?.before ?? null;
  }

  async #changes(repo: ShadowRepo, a: Snapshot, b: Snapshot): Promise<FileChange[]> {
    return describeChanges(await repo.diffTrees(a.tree, b.tree), repo.manifest(a.manifest), repo.manifest(b.manifest));
  }

  /** What turn `n` (default: the last with a snapshot) changed. */
  async diff(n?: number): Promise<TurnDiff> {
    const t = n === undefined ? this.#record.turns.findLast((x) => x.before) : this.#turn(n);
    if (!t) throw new CheckpointError('no turn of this session changed files');
    if (!t.before) return { turn: t, changes: [], text: '' };
    const repo = await this.#openRepo();
    const after = this.#afterOf(t) ?? (await this.#snapshot());
    const changes = await this.#changes(repo, t.before, after);
    const modes = changes
      .filter((c) => c.change === 'mode')
      .map((c) => `mode ${octal(c.from!)} → ${octal(c.to!)} ${c.path}\n`)
      .join('');
    return { turn: t, changes, text: modes + (await repo.unifiedDiff(t.before.tree, after.tree)) };
  }

  /** What going back to before turn `n` would do (the workspace is snapshot now to see what changed outside clm). */
  async plan(n: number): Promise<Rewind> {
    const from = this.#turn(n);
    const turns = this.#record.turns.filter((t) => t.turn >= n);
    const snapped = turns.filter((t) => t.before);
    if (!snapped.length) return { from, turns, plan: { items: [], conflicts: [] }, files: false };
    if (!this.#checkGit()) throw new CheckpointError('git is not installed');
    const repo = await this.#openRepo();
    const now = await this.#snapshot();
    const own: FileChange[][] = [];
    const outside: FileChange[][] = [];
    for (let i = 0; i < snapped.length; i++) {
      const t = snapped[i]!;
      const after = this.#afterOf(t) ?? now;
      own.push(await this.#changes(repo, t.before!, after));
      const next = snapped[i + 1]?.before ?? now;
      outside.push(await this.#changes(repo, after, next));
    }
    const target = snapped[0]!.before!;
    const plan = planUndo(
      own,
      outside,
      { files: await repo.listTree(target.tree), manifest: repo.manifest(target.manifest) },
      { files: await repo.listTree(now.tree), manifest: repo.manifest(now.manifest) },
    );
    return { from, turns, plan, files: true };
  }

  /** Put the files back as `r` says; conflicting ones only with `overwrite`. The turns leave the record. */
  async apply(r: Rewind, o: { overwrite: boolean }): Promise<RestoreResult> {
    let result: RestoreResult = { done: [], kept: [] };
    if (r.files) {
      const repo = await this.#openRepo();
      const target = r.turns.find((t) => t.before)!.before!;
      const manifest = repo.manifest(target.manifest);
      const items = r.plan.items.filter((i) => o.overwrite || !i.conflict);
      const shas = [...new Set(items.flatMap((i) => (i.target && i.target.kind !== 'dir' ? [i.target.sha] : [])))];
      const blobs = new Map<string, Buffer>();
      await repo.readBlobs(shas, (sha, data) => blobs.set(sha, Buffer.from(data)));
      result = applyPlan(
        this.#record.workspace,
        items,
        (sha) => blobs.get(sha)!,
        (d) => manifest.dirs[d],
      );
      for (const i of r.plan.items)
        if (!items.includes(i)) result.kept.push({ path: i.path, why: 'changed outside clm since the checkpoint' });
    }
    this.forget(r.from.turn);
    return result;
  }

  /** Turns from `n` on leave the record (their conversation or files were taken back). */
  forget(n: number): void {
    const turns = this.#record.turns;
    const i = turns.findIndex((t) => t.turn >= n);
    if (i >= 0) turns.splice(i);
    if (this.#current && !turns.includes(this.#current)) this.#current = null;
    this.save();
  }
}

function dropSnapshots(t: TurnRecord): void {
  t.before = undefined;
  t.after = undefined;
  t.keptBy = undefined;
}

/** The sessions whose checkpoints live in `repo`, oldest record first. */
function sessionsOf(stateDir: string, repo: string): string[] {
  const dir = join(stateDir, 'checkpoints', 'sessions');
  const out: { id: string; mtime: number }[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const file = join(dir, name);
    try {
      const rec = JSON.parse(readFileSync(file, 'utf8')) as RecordFile;
      if (rec.repo === repo) out.push({ id: name.slice(0, -5), mtime: statSync(file).mtimeMs });
    } catch {
      /* unreadable: it keeps nothing here */
    }
  }
  return out.sort((a, b) => a.mtime - b.mtime).map((s) => s.id);
}
