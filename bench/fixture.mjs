// The read_file fixture of the benchmarks: BYTES of printable text in 64-byte lines (63
// characters + newline, each line starting with a digit so lines differ); the last line may be short.
export function fixtureText(bytes) {
  const line = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_';
  let out = '';
  let n = 0;
  while (out.length + 64 <= bytes) out += `${n++ % 10}${line.slice(1, 63)}\n`;
  const rest = bytes - out.length;
  if (rest > 0) out += rest === 1 ? '\n' : `${line.slice(0, rest - 1)}\n`;
  return out;
}
