/**
 * Pure statistics for the benchmarks: percentiles, medians, ratios, rounding. No I/O, so
 * test/bench/stats.test.ts checks them without DynamoDB.
 */

/**
 * The p-th percentile (0 < p <= 100) by the nearest-rank method: the smallest sample such that at
 * least p % of the samples are <= it. Always an observed value (no interpolation), so p99 of fewer
 * than 100 samples is the maximum. Throws on an empty list or a p outside (0, 100].
 */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new RangeError('percentile of no samples');
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[rank - 1]!;
}

/** The middle sample (mean of the two middle ones for an even count). */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) throw new RangeError('median of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** p50, p99 and max of latency samples in ms, rounded to 0.01 ms. */
export function summarize(samplesMs: readonly number[]): LatencySummary {
  return {
    count: samplesMs.length,
    p50Ms: round(percentile(samplesMs, 50), 2),
    p99Ms: round(percentile(samplesMs, 99), 2),
    maxMs: round(Math.max(...samplesMs), 2),
  };
}

/** a / b rounded to `digits`; null when b is 0 (no meaningful ratio). */
export function ratio(a: number, b: number, digits = 2): number | null {
  if (b === 0) return null;
  return round(a / b, digits);
}

export function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Sum of a count map (requests by operation). */
export function total(counts: Readonly<Record<string, number>>): number {
  return Object.values(counts).reduce((sum, n) => sum + n, 0);
}

/** Adds `more` into `into`, key by key. */
export function addCounts(
  into: Record<string, number>,
  more: Readonly<Record<string, number>> | ReadonlyMap<string, number>,
): Record<string, number> {
  const entries = more instanceof Map ? [...more.entries()] : Object.entries(more);
  for (const [key, n] of entries) into[key] = (into[key] ?? 0) + n;
  return into;
}

/** Sorted plain-object copy of a count map, for stable JSON. */
export function sortedCounts(counts: ReadonlyMap<string, number> | Readonly<Record<string, number>>): Record<string, number> {
  const entries = counts instanceof Map ? [...counts.entries()] : Object.entries(counts);
  return Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));
}
