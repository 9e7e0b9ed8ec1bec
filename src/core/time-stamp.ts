// RFC 2822 local time ("%a, %d %b %Y %H:%M:%S %z"): Intl has no such format, but Date's
// toString has every field of it in a form ECMAScript fixes ("Mon Nov 30 2026 09:05:07
// GMT+0100 (…)"; English names, zero-padded numbers), only in another order.
const FIELDS = /^(\w+) (\w+) (\d+) (-?\d+) (\S+) GMT(\S+).*/s;

export function rfc2822(d: Date): string {
  return d.toString().replace(FIELDS, '$1, $3 $2 $4 $5 $6');
}
