// The first line of the transcript, as the original's.

import type { Block } from '../../tui/transcript.js';
import { wrapText } from '../../tui/wrap.js';

export const BANNER = 'clm -- type a prompt, /help for commands, /quit to exit.';

export function bannerBlock(): Block {
  let cache: { width: number; lines: string[] } | null = null;
  return {
    final: true,
    render: (width) => {
      if (cache?.width !== width) cache = { width, lines: wrapText(BANNER, width) };
      return cache.lines;
    },
  };
}
