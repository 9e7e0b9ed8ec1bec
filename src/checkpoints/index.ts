// Checkpoints: snapshots of the workspace in a shadow git repository kept in clm's state
// directory, taken before the first tool of a turn that may change files and when the turn ends;
// what a turn changed (diff); taking turns back (undo, rewind) with conflict safety. It owns the
// shadow repository and its records; it never writes the workspace's own .git, and imports
// nothing of the agent, the program or the screen (the conversation half of a rewind is theirs).

export {
  Checkpoints,
  CheckpointError,
  recordPath,
  type CheckpointsOptions,
  type Rewind,
  type TurnDiff,
  type TurnRecord,
} from './checkpoints.js';
export { DEFAULT_CHECKPOINT_SETTINGS, type CheckpointSettings } from './settings.js';
export { changeLine, changeSummary, type ChangeKind, type FileChange } from './changes.js';
export { describeRewind } from './describe.js';
export { colourDiff, type DiffStyles } from './diff-colour.js';
export { gitAvailable, GitError } from './git.js';
export type { RestoreResult } from './restore.js';
export type { PlanItem, UndoPlan } from './undo-plan.js';
export { workspaceRoot } from './workspace.js';
