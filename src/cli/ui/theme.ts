// The colours and styles of the clm screen, as the original's: user blue, tool summaries magenta,
// errors red, timeouts and permission questions yellow, reasoning dim colour 10, the `clm>` label
// cyan, tool output and meta lines dim, the status bar black on blue.

import { style } from '../../tui/style.js';

export const THEME = {
  user: style({ fg: 'blue' }),
  label: style({ fg: 'cyan' }),
  tool: style({ fg: 'magenta' }),
  output: style({ dim: true }),
  meta: style({ dim: true }),
  error: style({ fg: 'red' }),
  timeout: style({ fg: 'yellow' }),
  permission: style({ fg: 'yellow' }),
  reasoning: style({ fg: 10, dim: true }),
  notice: style({}),
  queued: style({ fg: 'blue', dim: true }),
  status: style({ fg: 'black', bg: 'blue' }),
  prompt: style({ bold: true }),
} as const;
