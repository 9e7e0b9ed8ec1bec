// What each key of the interactive screen does: one table, read top to bottom. A key goes to the
// first layer that takes it — the transcript search while it is open (transcript-search.ts), a
// permission question (its answer keys are the desk's, permission-asker.ts), a command's question
// (its answer letters are its own, question.ts) — then to the rows of mode 'input' below, then to
// the input box's editor (src/tui/editor.ts: cursor, deletion, history, new lines). Within a mode
// the first row whose key matches and whose conditions all hold decides; a key with no such row
// goes on to the editor. The actions are UiApp's (app.ts); docs/cli.md lists the keys, and a test
// checks that every key bound here is there.

/** Where a row applies: a permission question is open, a command's question is open, or neither. */
export type KeyMode = 'permission' | 'question' | 'input';

/** What must hold for a row to apply (all of its conditions). */
export type KeyCondition =
  /** A turn is running. */
  | 'busy'
  /** The input box holds text. */
  | 'typed'
  /** The input box is empty. */
  | 'empty'
  /** Prompts wait in the queue. */
  | 'queued';

export type KeyAction =
  | 'denyPermission'
  | 'cancelQuestion'
  | 'send'
  | 'cancelTurn'
  | 'cancelTurnAndForever'
  | 'clearInput'
  | 'quit'
  | 'nothing'
  | 'redraw'
  | 'toggleOutput'
  | 'toggleReasoning'
  | 'suspend'
  | 'pageUp'
  | 'pageDown'
  | 'scrollToTop'
  | 'scrollToEnd'
  | 'search'
  | 'complete'
  | 'takeBackQueued';

export interface KeyBinding {
  /** Default 'input'. */
  readonly mode?: KeyMode;
  /** Keys as `keyId` writes them (src/tui/keys.ts): `ctrl+c`, `alt+up`, `pagedown`. */
  readonly keys: readonly string[];
  readonly when?: readonly KeyCondition[];
  readonly action: KeyAction;
}

export const KEY_BINDINGS: readonly KeyBinding[] = [
  // A permission question: Ctrl-C denies it (and what is queued) and cancels the turn.
  { mode: 'permission', keys: ['ctrl+c'], action: 'denyPermission' },
  // A command's question: Esc or Ctrl-C answers none.
  { mode: 'question', keys: ['escape', 'ctrl+c'], action: 'cancelQuestion' },

  { keys: ['enter'], action: 'send' },
  // Ctrl-C: cancel the turn (and -f's repeating); idle: clear the input, or quit when it is empty.
  { keys: ['ctrl+c'], when: ['busy'], action: 'cancelTurnAndForever' },
  { keys: ['ctrl+c'], when: ['typed'], action: 'clearInput' },
  { keys: ['ctrl+c'], action: 'quit' },
  // Esc: cancel the turn; idle: clear the input.
  { keys: ['escape'], when: ['busy'], action: 'cancelTurn' },
  { keys: ['escape'], when: ['typed'], action: 'clearInput' },
  { keys: ['escape'], action: 'nothing' },
  // Ctrl-D quits on an empty input; on text the editor deletes the character under the cursor.
  { keys: ['ctrl+d'], when: ['empty'], action: 'quit' },
  { keys: ['ctrl+l'], action: 'redraw' },
  { keys: ['ctrl+o'], action: 'toggleOutput' },
  { keys: ['ctrl+r'], action: 'toggleReasoning' },
  { keys: ['ctrl+z'], action: 'suspend' },
  // A permission question taller than its window scrolls first, then the transcript (full screen).
  { keys: ['pageup'], action: 'pageUp' },
  { keys: ['pagedown'], action: 'pageDown' },
  // On an empty input Home and End scroll the transcript; on text the editor moves the cursor.
  { keys: ['home'], when: ['empty'], action: 'scrollToTop' },
  { keys: ['end'], when: ['empty'], action: 'scrollToEnd' },
  { keys: ['ctrl+s'], action: 'search' },
  { keys: ['tab'], action: 'complete' },
  // The last queued prompt back into an empty input to be edited; Up stays the prompt history.
  { keys: ['alt+up'], when: ['empty', 'queued'], action: 'takeBackQueued' },
  { keys: ['alt+up'], action: 'nothing' },
];

const BY_KEY = new Map<string, KeyBinding[]>();
for (const b of KEY_BINDINGS)
  for (const k of b.keys) {
    const at = `${b.mode ?? 'input'} ${k}`;
    BY_KEY.set(at, [...(BY_KEY.get(at) ?? []), b]);
  }

/** The action the table binds key `id` to in `mode` where `holds` says which conditions hold; null for none. */
export function boundAction(mode: KeyMode, id: string, holds: (c: KeyCondition) => boolean): KeyAction | null {
  const rows = BY_KEY.get(`${mode} ${id}`);
  return rows?.find((b) => !b.when || b.when.every(holds))?.action ?? null;
}
