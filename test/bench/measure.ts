/** Small statistics for the benchmark: latency percentiles, a least-squares slope, number and table formatting. */

export interface LatencySummary {
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Percentiles by the nearest-rank method; zeros when nothing was measured. */
export function latencySummary(latenciesMs: number[]): LatencySummary {
  if (latenciesMs.length === 0) return { p50Ms: 0, p90Ms: 0, p99Ms: 0, maxMs: 0 };
  const sorted = Float64Array.from(latenciesMs).sort();
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
  return { p50Ms: rank(0.5), p90Ms: rank(0.9), p99Ms: rank(0.99), maxMs: sorted[sorted.length - 1] };
}

/** Least-squares slope of y over x (units of y per unit of x). */
export function slope(points: Array<{ x: number; y: number }>): number {
  const n = points.length;
  if (n < 2) return 0;
  const meanX = points.reduce((sum, p) => sum + p.x, 0) / n;
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / n;
  let covariance = 0;
  let variance = 0;
  for (const p of points) {
    covariance += (p.x - meanX) * (p.y - meanY);
    variance += (p.x - meanX) ** 2;
  }
  return variance === 0 ? 0 : covariance / variance;
}

/** The most events any window of `windowMs` holds (times in ms, any order). */
export function busiestWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end] - sorted[start] >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/**
 * What the shared rate limiter promises for any window of `windowMs`: slots exactly one interval
 * (60/rate s) apart on Redis's clock, each request sent within a quarter interval of its slot, so at
 * most floor((W + interval/4) / interval) + 1 requests leave in it. A receiver whose arrival stamps
 * may be up to `stampErrorMs` late can count that many more intervals' worth.
 */
export function promisedBusiest(ratePerMinute: number, windowMs: number, stampErrorMs = 0): number {
  const intervalMs = 60_000 / ratePerMinute;
  return Math.floor((windowMs + intervalMs / 4 + stampErrorMs) / intervalMs) + 1;
}

/**
 * The highest rate per minute a receiver can measure over `requests` consecutive requests of that
 * limiter (first to last stamp): their slots span (requests - 1) intervals, the first may leave up to
 * a quarter interval late, and the stamps may be up to `stampErrorMs` late.
 */
export function promisedRate(ratePerMinute: number, requests: number, stampErrorMs = 0): number {
  const intervalMs = 60_000 / ratePerMinute;
  return (60_000 * (requests - 1)) / ((requests - 1) * intervalMs - intervalMs / 4 - stampErrorMs);
}

/** `1234567` -> `1,234,567`; with `digits` decimals. */
/** The middle value (the lower of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

export function formatNumber(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A markdown table. */
export function markdownTable(header: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.map(String).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
