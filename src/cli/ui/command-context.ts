// The seam between the interactive screen and what its slash commands and TAB completion do:
// the screen implements CommandContext; commands.ts and completion.ts act through it and never
// draw themselves, so they are tested without a terminal.

import type { Runtime } from '../runtime.js';

/** Display settings the commands toggle (`/reasoning`, `/output`); config.lua gives the defaults. */
export interface UiSettings {
  /** Reasoning shown in the transcript (^R, `/reasoning`, `show_thinking`). */
  showReasoning: boolean;
  /** Tool output shown whole instead of collapsed (^O, `/output`, `expand_output`). */
  expandOutput: boolean;
}

/** How a printed line is styled: plain text, a bracketed notice (`[switched to model: x]`), an error. */
export type PrintKind = 'info' | 'notice' | 'error';

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
