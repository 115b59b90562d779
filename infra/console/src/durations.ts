// How the run page writes durations: a task's time, and its step's time axis.

/** A duration to read at a glance: milliseconds under a second, where tenths of a second would read "0.0 s". */
export function seconds(ms: number) {
  if (ms < 999.5) return `${Math.round(ms)} ms`;
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/** The axis's start, middle and end, all in one unit chosen by the span, so three ticks never read alike. */
export function axisTicks(span: number): string[] {
  const [divisor, digits, unit] = span < 999.5 ? [1, 0, "ms"] : span < 10_000 ? [1000, 1, "s"] : [1000, 0, "s"];
  return [0, 0.5, 1].map((at) => (at === 0 ? `0 ${unit}` : `${((span * at) / divisor).toFixed(digits)} ${unit}`));
}
