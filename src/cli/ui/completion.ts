// TAB completion of the interactive UI, for the text before the cursor:
// - the first word `/…`: command names, prompt commands' too (aliases are not offered);
// - `/agent ` profiles, `/provider ` provider names, `/reasoning ` on|off, `/output ` full|short;
// - `/model `: provider names before a `/` (one ⇒ `name/`; none ⇒ the current server's own ids),
//   then that provider's configured
//   specs at once (`from config:`, listed even when there is one) and its server's live catalog
//   later (`from server:`), which completes the text itself only when no configured spec did;
// - `:sh` (at least one letter): emoji shortcodes (one ⇒ the emoji itself);
// - `@pa` (a file mention): paths from the workspace;
// - a word holding a `/` or starting with `~`: paths.
// What arrives later is a plain promise: the screen ignores it when a key came in between, and
// the work behind it (one GET per provider a minute, one readdir) is small enough to let finish.

import { completeShortcode, emojiReady, loadEmoji } from '../../tui/emoji.js';
import type { Completion, CommandContext, CompletionResult } from './command-context.js';
import { capped, commonPrefix, completionOf } from './candidates.js';
import { familyOf } from './command-families.js';
import { ALL_COMMANDS, commandNamed, promptCommandNames } from './commands.js';
import { liveModels } from './live-models.js';
import { completePath, isPathWord } from './path-completion.js';
import { agentNames, modelSpecs, providerNames } from './switching.js';

const NOTHING: CompletionResult = { now: null };

/** Emoji names are looked up whole; this many is plenty to count "how many more". */
const EMOJI_SCAN = 100_000;

const starting = (list: readonly string[], prefix: string) => list.filter((s) => s.startsWith(prefix));

function commandNames(word: string, ctx: CommandContext): Completion | null {
  const names = [...ALL_COMMANDS.map((c) => c.name), ...promptCommandNames(ctx).usable];
  return completionOf(
    word,
    starting(
      names.map((n) => `/${n}`),
      word,
    ),
    { unique: ' ' },
  );
}

/** `/model ARG` */
function modelArg(arg: string, ctx: CommandContext): CompletionResult {
  const rt = ctx.runtime;
  const slash = arg.indexOf('/');
  if (slash < 0) {
    const now = completionOf(arg, starting(providerNames(rt), arg), { unique: '/' });
    if (now) return { now };
    // No provider by that name: a bare id for the current connection, from its server.
    return {
      now: null,
      later: liveModels(rt).then((ids) => completionOf(arg, starting(ids, arg), { unique: ' ', heading: 'from server:' })),
    };
  }
  const provider = arg.slice(0, slash);
  if (!providerNames(rt).includes(provider)) return NOTHING;
  const configured = starting(modelSpecs(rt), arg);
  // Listed even when there is one, with no trailing space: the server may offer longer ids
  // that start with it (gpt-5 → gpt-5-mini), and its list follows.
  const now: Completion | null = configured.length
    ? { replace: arg.length, insert: commonPrefix(configured), candidates: capped(configured), heading: 'from config:' }
    : null;
  const later = liveModels(rt, provider).then((ids): Completion | null => {
    const live = starting(
      ids.map((id) => `${provider}/${id}`),
      arg,
    );
    if (!live.length) return null;
    // When the configured ones already filled in their common part, the server's list is shown
    // under it and inserts nothing; otherwise it completes the text as `now` would have.
    if (now) return { replace: 0, insert: '', candidates: capped(live), heading: 'from server:' };
    return completionOf(arg, live, { unique: ' ', heading: 'from server:' });
  });
  return { now, later };
}

function argument(command: string, arg: string, ctx: CommandContext): CompletionResult {
  const rt = ctx.runtime;
  switch (command) {
    case 'agent':
      return { now: completionOf(arg, starting(agentNames(rt), arg), { unique: ' ' }) };
    case 'provider':
      return { now: completionOf(arg, starting(providerNames(rt), arg), { unique: ' ' }) };
    case 'model':
      return modelArg(arg, ctx);
    case 'reasoning':
      return { now: completionOf(arg, starting(['on', 'off'], arg), { unique: ' ' }) };
    case 'output':
      return { now: completionOf(arg, starting(['full', 'short'], arg), { unique: ' ' }) };
    default:
      return NOTHING;
  }
}

/** `:name` with at least one letter typed. */
function emoji(word: string): Completion | null {
  const prefix = word.slice(1);
  const found = completeShortcode(prefix, EMOJI_SCAN);
  if (!found.length) return null;
  if (found.length === 1) return { replace: word.length, insert: found[0]!.emoji, candidates: [] };
  return {
    replace: word.length,
    insert: `:${commonPrefix(found.map((f) => f.name))}`,
    candidates: capped(found.map((f) => `:${f.name}: ${f.emoji}`)),
  };
}

/** The command word or its first argument, when that is what the text ends in; null otherwise. */
function commandPart(text: string, ctx: CommandContext): CompletionResult | null {
  const first = /^\s*(\/[^\s/]*)$/.exec(text);
  if (first) {
    const now = commandNames(first[1]!, ctx);
    if (now) return { now };
  }
  const withArg = /^\s*(\/\S+)\s+(\S*)$/.exec(text);
  if (!withArg) return null;
  const cmd = commandNamed(withArg[1]!);
  const family = cmd && familyOf(cmd);
  if (family) return family.complete?.(cmd, withArg[2]!, ctx) ?? NOTHING;
  return cmd ? argument(cmd.name, withArg[2]!, ctx) : null;
}

/** `:sh`, after a blank, an opening bracket or quote, or at the start: emoji shortcodes; null otherwise. */
function shortcodePart(text: string): CompletionResult | null {
  const sc = /(?:^|[\s([{"'])(:[a-z0-9_+-]+)$/.exec(text);
  if (!sc) return null;
  const w = sc[1]!;
  if (emojiReady()) return { now: emoji(w) };
  return {
    now: null,
    later: loadEmoji().then(
      () => emoji(w),
      () => null,
    ),
  };
}

/** A path word, or a file mention `@path` (relative to the workspace); null otherwise. */
function pathPart(text: string): CompletionResult | null {
  const paths = (w: string) => ({ now: null, later: completePath(w, { home: process.env.HOME, cwd: process.cwd() }) });
  // Only the last part of the word is replaced.
  const mention = /(?:^|[\s([{])@((?:\\ |\S)*)$/.exec(text);
  if (mention) {
    const p = mention[1]!;
    return paths(isPathWord(p) ? p : `./${p}`);
  }
  // A path word may hold escaped spaces (`My\ Documents/`, path-completion.ts).
  const word = /(?:\\ |\S)*$/.exec(text)![0];
  return isPathWord(word) ? paths(word) : null;
}

/** What TAB offers for `textBeforeCursor` (the cursor's line up to the cursor). */
export function complete(textBeforeCursor: string, ctx: CommandContext): CompletionResult {
  return commandPart(textBeforeCursor, ctx) ?? shortcodePart(textBeforeCursor) ?? pathPart(textBeforeCursor) ?? NOTHING;
}
