import { describe, expect, it } from 'vitest';
import { LeaseConfigError, leaseTiming, minimumFunctionTimeoutMs, validateTiming, worstCallMs } from '@contest-sync/scheduled-singleton';

describe('leaseTiming', () => {
  it('derives renew period and deadline inside the lease', () => {
    const timing = leaseTiming(30);
    expect(timing).toMatchObject({ durationMs: 30_000, renewEveryMs: 10_000, renewDeadlineMs: 20_000, stopMarginMs: 13_600 });
  });

  it('accepts the 2-second leases the tests use', () => {
    const timing = leaseTiming(2);
    expect(timing.renewEveryMs).toBeLessThan(timing.renewDeadlineMs);
    expect(timing.renewDeadlineMs).toBeLessThan(timing.durationMs);
  });

  it.each([0, 1, 1.99, -5, Number.NaN])('refuses a lease of %s seconds', (seconds) => {
    expect(() => leaseTiming(seconds)).toThrow(LeaseConfigError);
    expect(() => leaseTiming(seconds)).toThrow(/lease duration must be a number of seconds >= 2/);
  });

  it('refuses a function timeout that leaves no time to work', () => {
    expect(() => leaseTiming(30, { functionTimeoutMs: 12_000 })).toThrow(/function timeout \(12000 ms\) leaves no time/);
    expect(() => leaseTiming(30, { functionTimeoutMs: 120_000 })).not.toThrow();
  });

  it('keeps a stop margin that covers one DynamoDB call with every SDK retry timing out', () => {
    // 3 attempts x (1 s connect + 3 s request) + SDK backoff (200 + 400 ms), plus 1 s.
    expect(worstCallMs()).toBe(12_600);
    expect(leaseTiming(2).stopMarginMs).toBeGreaterThan(worstCallMs());
    expect(minimumFunctionTimeoutMs(leaseTiming(30))).toBe(23_600);
    expect(() => leaseTiming(30, { functionTimeoutMs: 23_600 })).toThrow(/stop margin kept for the release \(13600 ms/);
    expect(() => leaseTiming(30, { functionTimeoutMs: 23_601 })).not.toThrow();
  });

  it('refuses inconsistent hand-made timings', () => {
    expect(() =>
      validateTiming({ durationMs: 1000, renewEveryMs: 900, renewDeadlineMs: 800, stopMarginMs: 100, renewRetryMs: 100 }),
    ).toThrow(/renewEvery \(900 ms\) < renewDeadline \(800 ms\)/);
  });
});
