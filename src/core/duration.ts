// How a message names a length of time: "300 ms" below a second, else seconds to one decimal
// ("1 s", "2.5 s"). One form for every timeout, deadline and retry wait the core reports.

export function duration(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(1)} s` : `${ms} ms`;
}
