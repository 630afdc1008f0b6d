/** Types of starvation-probe.mjs (plain JavaScript: a worker loads it with `node --import`). */

/** One tick that waited for a CPU or fired late: the span of `spanMs` ending at `atMs` (epoch ms). */
export interface StarvationSample {
  atMs: number;
  spanMs: number;
  /** Run-queue wait of the main thread in the span (ms). */
  waitMs: number;
  /** How late the tick fired (ms). */
  lagMs: number;
}

export interface StarvationTotals {
  /** `schedstat` (the kernel's run-queue wait) or `lag-minus-cpu` (an estimate where schedstat is missing). */
  source: 'schedstat' | 'lag-minus-cpu';
  sinceMs: number;
  untilMs: number;
  waitMs: number;
  maxLagMs: number;
}

export interface StarvationProbe {
  source: StarvationTotals['source'];
  samples(): StarvationSample[];
  totals(): StarvationTotals;
  stop(): void;
}

export function startStarvationProbe(options?: { everyMs?: number }): StarvationProbe;
