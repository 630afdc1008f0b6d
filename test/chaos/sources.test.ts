/**
 * The other sources' plans (sources.ts, `planSources`): seeded, and in a contention-only trial
 * free of every fault but contention, as the checker's contention rule assumes (checker.ts).
 */
import { describe, expect, it } from 'vitest';
import { planSources } from './sources.js';

const INTERVALS = ['2026-12-07T20:00:00Z', '2026-12-07T21:00:00Z'];
const PLATFORMS = ['atcoder', 'codechef', 'leetcode'];

describe('planSources', () => {
  it('draws the same plan from the same seed, with signals, misbehaving replies, one source down and one slow', () => {
    const plans = Array.from({ length: 40 }, (_, seed) => planSources(seed, INTERVALS, 3_000, PLATFORMS));
    expect(planSources(7, INTERVALS, 3_000, PLATFORMS)).toEqual(plans[7]);
    for (const plan of plans) {
      expect(plan.filter((source) => source.down)).toHaveLength(1);
      expect(plan.filter((source) => source.delayMs > 0)).toHaveLength(1);
    }
    const faults = plans.flat().flatMap((source) => source.workers.map((worker) => worker.fault.kind));
    expect(new Set(faults)).toEqual(new Set(['none', 'kill', 'kill-holder', 'stop-holder']));
    const replies = plans.flat().flatMap((source) => source.replies);
    expect(replies.some((reply) => reply.status === 503)).toBe(true);
    expect(replies.some((reply) => reply.truncateAt !== undefined)).toBe(true);
  });

  it('keeps the workers and events in a contention-only trial, without signals, outages or failing replies', () => {
    for (let seed = 0; seed < 40; seed += 1) {
      const drawn = planSources(seed, INTERVALS, 9_000, PLATFORMS);
      const calm = planSources(seed, INTERVALS, 9_000, PLATFORMS, { contentionOnly: true });
      for (const [i, source] of calm.entries()) {
        expect(source.down).toBe(false);
        expect(source.delayMs).toBe(0);
        expect(source.workers.map(({ id, event, startAtMs }) => ({ id, event, startAtMs }))).toEqual(
          drawn[i]!.workers.map(({ id, event, startAtMs }) => ({ id, event, startAtMs })),
        );
        expect(source.workers.every((worker) => worker.fault.kind === 'none')).toBe(true);
        // Answered, half of them slow enough to outlast a renewal, all within the client's 10 s attempt.
        for (const reply of source.replies) {
          expect(reply.status ?? 200).toBe(200);
          expect(reply.body).toBeUndefined();
          expect(reply.truncateAt).toBeUndefined();
          if (reply.delayMs !== undefined) expect(reply.delayMs).toBeGreaterThanOrEqual(2_500);
          expect(reply.delayMs ?? 0).toBeLessThanOrEqual(5_000);
        }
      }
    }
  });
});
