// The seam between the interactive screen and what its slash commands and TAB completion do:
// the screen implements CommandContext; commands.ts and completion.ts act through it and never
// draw themselves, so they are tested without a terminal.

import type { Message } from '../../core/types.js';
import type { Runtime } from '../runtime.js';
import type { PrintKind } from './transcript-view.js';

/** Display settings the commands toggle (`/reasoning`, `/output`); config.lua gives the defaults. */
export interface UiSettings {
  /** Reasoning shown in the transcript (^R, `/reasoning`, `show_thinking`). */
  showReasoning: boolean;
  /** Tool output shown whole instead of collapsed (^O, `/output`, `expand_output`). */
  expandOutput: boolean;
}

/** A slash command as /help and completion know it. */
export interface CommandInfo {
  /** Without the slash. */
  name: string;
  aliases: readonly string[];
  /** The arguments, as shown by /help (`[spec]`, `<name>`). */
  args?: string;
  /** What /help says of it; '' lists it on the row of the command before (one line for a family). */
  help: string;
}

/** Slash commands beyond the core ones of commands.ts (command-families.ts lists them). */
export interface CommandFamily {
  readonly commands: readonly CommandInfo[];
  /** Run `cmd` (one of this family's) with the rest of the line. */
  run(cmd: CommandInfo, arg: string, ctx: CommandContext): Promise<void> | void;
  /** TAB on the first argument of `cmd`. */
  complete?(cmd: CommandInfo, arg: string, ctx: CommandContext): CompletionResult;
}

/** One answer of a question a command asks: the key that gives it, and its label (`(y) yes`). */
export interface Answer {
  key: string;
  label: string;
}

export interface CommandContext {
  /** The program's runtime: the current agent, its resolved run, sessions, profile switch. */
  readonly runtime: Runtime;
  /** Whether a turn, compaction or retry wait is in flight (commands that need idle say `busy; try again when idle`). */
  busy(): boolean;
  /**
   * Add text to the transcript, one block (it may hold several lines), e.g.
   * print('[switched to model: openai/gpt-5]', 'notice'). The text is given without the blank
   * lines around it; the screen spaces blocks itself.
   */
  print(text: string, kind?: PrintKind): void;
  /** Empty the transcript and its scroll position (`/clear`). */
  clearTranscript(): void;
  /** Ask above the status bar, answered by one key; null for Esc (the question and answer stay in the transcript). */
  ask(question: string, answers: readonly Answer[]): Promise<string | null>;
  /** Show `messages` as the transcript (the conversation after a rewind), as a resumed session is shown. */
  replay(messages: readonly Message[]): void;
  readonly settings: UiSettings;
  /** The settings changed: re-render what depends on them. */
  settingsChanged(): void;
  /** Probe the connection now (after every switch); the status bar shows the result. */
  probeConnection(): void;
  /** End the program as `/quit` does. */
  quit(): void;
}

/** What TAB offers for the text before the cursor. */
export interface Completion {
  /** How many characters before the cursor the completion replaces. */
  replace: number;
  /** The text that replaces them (the common prefix of the candidates; with a trailing space or `/` when unique). */
  insert: string;
  /**
   * Every candidate, for a list under the input when there are several (empty when unique; a
   * list of one is shown too, e.g. the only configured model while the server's list is coming).
   * At most 128, then a last entry `(+N more)`.
   */
  candidates: string[];
  /** A heading for the list, e.g. `from config:` / `from server:`. */
  heading?: string;
}

export interface CompletionResult {
  /** What can be offered at once (null: nothing). */
  now: Completion | null;
  /**
   * More that arrives later (the provider's live model list, a directory listing, the emoji
   * table's first load). The screen drops it when a key was typed since (stale), and shows
   * `(live model fetch failed: <msg>)` when it rejects (only the model list rejects). It applies to
   * the text as it is after `now` was applied: when `now` inserted something, `later` only lists
   * (replace 0, insert '').
   */
  later?: Promise<Completion | null>;
}
