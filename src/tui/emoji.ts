// Emoji `:shortcode:` names (GitHub's gemoji set): expansion and completion. The table (about
// 37 KB) is a separate module loaded on first use, so screens that never need it never load it.

let names: string[] | null = null;
let glyphs: Map<string, string> | null = null;
let loading: Promise<void> | null = null;

export function loadEmoji(): Promise<void> {
  loading ??= import('./emoji-data.js').then(({ EMOJI_TABLE }) => {
    const n: string[] = [];
    const m = new Map<string, string>();
    for (const line of EMOJI_TABLE.split('\n')) {
      const sp = line.indexOf(' ');
      const name = line.slice(0, sp);
      n.push(name);
      m.set(name, line.slice(sp + 1));
    }
    names = n;
    glyphs = m;
  });
  return loading;
}

export function emojiReady(): boolean {
  return glyphs !== null;
}

/** The emoji for a shortcode name (without colons); undefined when unknown or not loaded yet. */
export function emojiFor(name: string): string | undefined {
  if (!glyphs) {
    void loadEmoji();
    return undefined;
  }
  return glyphs.get(name);
}

/** Shortcodes starting with `prefix`, in name order, at most `max` of them. */
export function completeShortcode(prefix: string, max = 128): { name: string; emoji: string }[] {
  if (!names || !glyphs) {
    void loadEmoji();
    return [];
  }
  // Binary search for the first name >= prefix; matches follow it.
  let lo = 0,
    hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (names[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  const out: { name: string; emoji: string }[] = [];
  for (let i = lo; i < names.length && out.length < max && names[i]!.startsWith(prefix); i++)
    out.push({ name: names[i]!, emoji: glyphs.get(names[i]!)! });
  return out;
}

/**
 * The `:name` shortcode that ends at `offset` in `text` (the user just typed its closing ':'),
 * as { start, emoji } for replacing text.slice(start, offset + 1); null when there is none.
 */
export function shortcodeBefore(text: string, offset: number): { start: number; emoji: string } | null {
  if (text[offset] !== ':') return null;
  const m = /:([a-z0-9_+-]+)$/.exec(text.slice(Math.max(0, offset - 64), offset));
  if (!m) return null;
  const e = emojiFor(m[1]!);
  return e ? { start: offset - m[0].length, emoji: e } : null;
}

/** Every known `:name:` in text replaced by its emoji. */
export function expandShortcodes(text: string): string {
  if (!text.includes(':')) return text;
  return text.replace(/:([a-z0-9_+-]+):/g, (m, n: string) => emojiFor(n) ?? m);
}
