// RFC 2822 local time ("%a, %d %b %Y %H:%M:%S %z"), written by hand: Intl has no such format.

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const p2 = (n: number) => String(n).padStart(2, '0');

export function rfc2822(d: Date): string {
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const a = Math.abs(off);
  return (
    `${DAYS[d.getDay()]}, ${p2(d.getDate())} ${MONTHS[d.getMonth()]} ${d.getFullYear()} ` +
    `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${sign}${p2(Math.floor(a / 60))}${p2(a % 60)}`
  );
}
