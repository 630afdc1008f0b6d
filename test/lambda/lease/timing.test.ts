import { describe, expect, it } from 'vitest';
import { LeaseConfigError } from '../../../lambda/lease/errors.js';
import { leaseTiming, validateTiming } from '../../../lambda/lease/timing.js';

describe('leaseTiming', () => {
  it('derives renew period and deadline inside the lease', () => {
    const timing = leaseTiming(30);
    expect(timing).toMatchObject({ durationMs: 30_000, renewEveryMs: 10_000, renewDeadlineMs: 20_000, stopMarginMs: 5_000 });
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

  it('refuses inconsistent hand-made timings', () => {
    expect(() =>
      validateTiming({ durationMs: 1000, renewEveryMs: 900, renewDeadlineMs: 800, stopMarginMs: 100, renewRetryMs: 100 }),
    ).toThrow(/renewEvery \(900 ms\) < renewDeadline \(800 ms\)/);
  });
});
