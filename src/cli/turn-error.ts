// The text a failed turn is reported with: the agent's own, and for the program's iteration
// limit (which a long task can reach) how to raise it.

import { E2BIG } from '../core/errors.js';

export function turnError(status: number, error: string): string {
  if (status === E2BIG && error.startsWith('max iterations reached')) {
    return `${error}; raise the limit with --max-turns N or max_iterations in config.lua (0 = unlimited)`;
  }
  return error;
}
