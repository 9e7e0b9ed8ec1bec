// A tool a plugin registered: what the plugin API stages at load time and an invocation runs.

import type { ToolInfo } from './protocol.js';

export interface ToolReg {
  name: string;
  invokeRef: number;
  /** CPU budget of one call: timeout_ms, else 30 s. */
  cpuMs: number;
  info: ToolInfo;
}
