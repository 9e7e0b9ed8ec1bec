// RFC 2822 local time ("%a, %d %b %Y %H:%M:%S %z"), from the Date's local fields and offset:
// Date.prototype.toString has every field too, but its time-zone name makes ICU load its
// display names (~1 MiB of memory and ~0.3 ms at the first system prompt of a run), and
// toUTCString of the fields shifted into UTC costs as much memory.

// Split from one string: the browser bundle counts its bytes.
const DAYS = 'Sun Mon Tue Wed Thu Fri Sat'.split(' ');
const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');

const two = (n: number) => String(n).padStart(2, '0');

export function rfc2822(d: Date): string {
  // getTimezoneOffset is minutes *behind* UTC: UTC+01:00 gives -60.
  const ahead = -d.getTimezoneOffset();
  const sign = ahead < 0 ? '-' : '+';
  const off = Math.trunc(Math.abs(ahead)); // a local mean time before 1900 has seconds
  const year = d.getFullYear();
  const y = `${year < 0 ? '-' : ''}${String(Math.abs(year)).padStart(4, '0')}`;
  return `${DAYS[d.getDay()]}, ${two(d.getDate())} ${MONTHS[d.getMonth()]} ${y} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())} ${sign}${two(Math.floor(off / 60))}${two(off % 60)}`;
}
