// The checkpoints' settings (config.lua's `checkpoints` table) and their defaults.

export interface CheckpointSettings {
  /** Snapshot before the first tool of a turn that may change files (default true). */
  enabled: boolean;
  /** Leave out what the workspace's .gitignore files ignore (default true). */
  gitignore: boolean;
  /** Files larger than this are left out, and said so (bytes; default 16 MiB; 0 = no cap). */
  maxFileBytes: number;
  /** A workspace with more files and directories than this is not checkpointed (default 200,000). */
  maxFiles: number;
  /** Turns with snapshots kept per session; older ones lose theirs (default 100). */
  keep: number;
  /** The shadow repository of a workspace is pruned to this size, oldest sessions first (bytes; default 2 GiB). */
  maxBytes: number;
  /** Deadline of one git command (ms; default 120 s). */
  gitTimeoutMs: number;
}

export const DEFAULT_CHECKPOINT_SETTINGS: CheckpointSettings = {
  enabled: true,
  gitignore: true,
  maxFileBytes: 16 << 20,
  maxFiles: 200_000,
  keep: 100,
  maxBytes: 2 * 2 ** 30,
  gitTimeoutMs: 120_000,
};
