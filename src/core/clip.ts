// A text cut to a length for showing, saying how much was cut: nothing is cut silently.

/**
 * Longest tool name clm shows or repeats (well above the 64 characters provider APIs allow a
 * function name): a model can make up a name of any length.
 */
export const MAX_NAME = 100;

/** `text` cut to `max` characters (a surrogate pair is not split), with `… (+N chars)` saying how many were cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text[max - 1] ?? '') ? max - 1 : max;
  return `${text.slice(0, end)}… (+${text.length - end} chars)`;
}
