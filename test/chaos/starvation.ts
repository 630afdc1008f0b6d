/**
 * Starvation: the part of a run's time that the machine, not the product, took. A chaos trial runs
 * its workers, its proxies and DynamoDB Local on the same few cores, beside whatever else the
 * machine runs; a run whose process waited seconds for a CPU can lose its lease or reach its
 * deadline through no fault of its own. The checker's timing-free rules (fences, stale writes,
 * overlaps, the final tables) hold whatever the machine does and are always judged; the rules that
 * need the run to have had the CPU (contention alone never fails a run, the quiet phase gets every
 * interval done) are judged only where the harness measured no starvation, and a run it excuses is
 * reported as `starved`, with its figures, never silently.
 *
 * Three measures, each of the harness alone:
 * - the run's process waiting for a CPU (the worker's probe, starvation-probe.mjs: its main
 *   thread's run-queue wait, which its own work never adds to);
 * - the test process that carries the run's requests (proxies, recorders) waiting for a CPU
 *   (the runner's probe);
 * - DynamoDB Local answering a lease write late: one conditional update of one small item, which
 *   takes milliseconds unless the JVM is starved (only its time beyond LEASE_ANSWER_MS counts).
 *
 * A run is starved when these, merged (time counted once however many wait at once), cover at least
 * STARVED_SHARE of the window at stake: from the start of the run's last confirmed lease (or its
 * start, with none) to its end: a lost lease is judged on the renewals it missed, not on a slow start. On an idle machine they cover a few per cent at most.
 */
import type { RunHistory, StoreOp } from './history.js';

export type StallSource = 'worker' | 'harness' | 'dynamodb-local';

/** A span of time in which the harness held a run up. */
export interface Stall {
  fromMs: number;
  toMs: number;
  source: StallSource;
}

/** What the probes keep of a tick: the span ending at `atMs` in which the thread waited `waitMs`. */
export interface ProbeSample {
  atMs: number;
  waitMs: number;
}

/** The share of the window at stake that the harness must have taken for a failure to be its own. */
export const STARVED_SHARE = 1 / 3;
/** A lease write DynamoDB Local answers within this is on time; the rest of a slower answer is its stall. */
export const LEASE_ANSWER_MS = 100;

/** A probe's ticks as stalls (each tick's wait placed at its end: the wait happened within the tick). */
export function stallsOfSamples(samples: readonly ProbeSample[], source: StallSource): Stall[] {
  return samples.filter((s) => s.waitMs > 0).map((s) => ({ fromMs: s.atMs - s.waitMs, toMs: s.atMs, source }));
}

/** DynamoDB Local's late answers to lease writes (acquire, renew, release) of any run. */
export function slowLeaseAnswers(store: readonly StoreOp[]): Stall[] {
  return store
    .filter((op) => op.kind !== 'write' && op.repliedAtMs - op.forwardedAtMs > LEASE_ANSWER_MS)
    .map((op) => ({ fromMs: op.forwardedAtMs + LEASE_ANSWER_MS, toMs: op.repliedAtMs, source: 'dynamodb-local' as const }));
}

/** How much of `window` the stalls cover, each moment counted once; and each source's own cover. */
export function cover(
  stalls: readonly Stall[],
  window: { fromMs: number; toMs: number },
): { ms: number; bySource: Record<StallSource, number> } {
  const clipped = stalls
    .map((s) => ({ ...s, fromMs: Math.max(s.fromMs, window.fromMs), toMs: Math.min(s.toMs, window.toMs) }))
    .filter((s) => s.toMs > s.fromMs);
  const bySource: Record<StallSource, number> = { worker: 0, harness: 0, 'dynamodb-local': 0 };
  for (const source of Object.keys(bySource) as StallSource[]) bySource[source] = union(clipped.filter((s) => s.source === source));
  return { ms: union(clipped), bySource };
}

function union(stalls: readonly Stall[]): number {
  let total = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const s of [...stalls].sort((a, b) => a.fromMs - b.fromMs)) {
    if (s.toMs <= end) continue;
    total += s.toMs - Math.max(s.fromMs, end);
    end = s.toMs;
  }
  return total;
}

export interface RunStarvation {
  /** The window at stake: from the start of the run's last confirmed lease (or its start) to its end. */
  windowMs: number;
  /** How much of it the harness took, and each source's part. */
  starvedMs: number;
  bySource: Record<StallSource, number>;
  starved: boolean;
}

/**
 * How much of a run's time at stake the harness took. `harness` is the test process's and
 * DynamoDB Local's stalls; the run's own come with it. The window starts where the run's lease was
 * last confirmed as the run saw it (its `lease acquired` or last `lease renewed`: expiry less the
 * lease), or at its start. Undefined for a run without its times.
 */
export function starvationOfRun(run: RunHistory, harness: readonly Stall[], leaseMs: number): RunStarvation | undefined {
  if (run.startedAtMs === undefined || run.endedAtMs === undefined) return undefined;
  const expiries = [...(run.acquired !== undefined ? [run.acquired.expiresAtMs] : []), ...(run.renewals ?? [])];
  const window = { fromMs: Math.max(run.startedAtMs, ...expiries.map((expiresAtMs) => expiresAtMs - leaseMs)), toMs: run.endedAtMs };
  const own = stallsOfSamples(run.starvation?.samples ?? [], 'worker');
  const { ms, bySource } = cover([...own, ...harness], window);
  const windowMs = window.toMs - window.fromMs;
  return { windowMs, starvedMs: Math.round(ms), bySource, starved: windowMs > 0 && ms >= STARVED_SHARE * windowMs };
}

/** One line for a report: `starved 4210 of 6120 ms (worker 3100, harness 2200, dynamodb-local 900)`. */
export function describeStarvation(s: RunStarvation): string {
  const parts = (Object.entries(s.bySource) as [StallSource, number][])
    .filter(([, ms]) => ms > 0)
    .map(([source, ms]) => `${source} ${Math.round(ms)}`);
  return `starved ${s.starvedMs} of ${s.windowMs} ms${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}
