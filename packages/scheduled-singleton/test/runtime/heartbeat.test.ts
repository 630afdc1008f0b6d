import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeaseLostError, leaseTiming, type HeldLease } from '@contest-sync/scheduled-singleton';
import { Heartbeat, type Renewer } from '../../src/runtime/heartbeat.js';

const timing = leaseTiming(3); // renew every 1 s, give up 2 s after the last confirmation
const lease: HeldLease = { runId: 'run-1', fence: 4, expiresAtMs: 3_000, ledger: new Set(), handoff: new Set() };

function start(renew: Renewer['renew']) {
  const controller = new AbortController();
  const heartbeat = new Heartbeat({ renewer: { renew }, lease, timing, now: Date.now, controller });
  heartbeat.start();
  return { controller, heartbeat };
}

describe('Heartbeat', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(0);
  });
  afterEach(() => vi.useRealTimers());

  it('renews every period and keeps the last confirmed lease', async () => {
    const renew = vi.fn(async (held: HeldLease) => ({ ...held, expiresAtMs: Date.now() + timing.durationMs }));
    const { controller, heartbeat } = start(renew);
    await vi.advanceTimersByTimeAsync(3_500);
    expect(renew).toHaveBeenCalledTimes(3);
    expect(heartbeat.count).toBe(3);
    expect(heartbeat.current.expiresAtMs).toBe(3_000 + timing.durationMs);
    expect(controller.signal.aborted).toBe(false);
    await heartbeat.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(renew).toHaveBeenCalledTimes(3);
  });

  it('renewBeforeTurn renews in the caller\u2019s turn past half the period, and the next renewal counts from it', async () => {
    const renew = vi.fn(async (held: HeldLease) => ({ ...held, expiresAtMs: Date.now() + timing.durationMs }));
    const { controller, heartbeat } = start(renew);
    await vi.advanceTimersByTimeAsync(400);
    await heartbeat.renewBeforeTurn(renew); // 0.4 s since the grant: not yet
    expect(renew).toHaveBeenCalledTimes(0);
    await vi.advanceTimersByTimeAsync(200);
    await heartbeat.renewBeforeTurn(renew); // 0.6 s: renewed now
    expect(renew).toHaveBeenCalledTimes(1);
    expect(heartbeat.current.expiresAtMs).toBe(600 + timing.durationMs);
    await vi.advanceTimersByTimeAsync(900); // t=1.5 s: the regular renewal now falls at 1.6 s, not at 1 s
    expect(renew).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(renew).toHaveBeenCalledTimes(2);
    expect(controller.signal.aborted).toBe(false);
    await heartbeat.stop();
  });

  it('aborts at once when DynamoDB says the lease is someone else\u2019s', async () => {
    const lost = new LeaseLostError('lease lost: taken over by run-2 (fence 5)', 'run-1', 4);
    const { controller } = start(async () => {
      throw lost;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(controller.signal.aborted).toBe(true);
    expect(controller.signal.reason).toBe(lost);
  });

  it('retries renewals whose outcome is unknown (a timeout after the write landed)', async () => {
    let calls = 0;
    const renew = vi.fn(async (held: HeldLease) => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      return { ...held, expiresAtMs: Date.now() + timing.durationMs };
    });
    const onRenewError = vi.fn();
    const controller = new AbortController();
    const heartbeat = new Heartbeat({ renewer: { renew }, lease, timing, now: Date.now, controller, onRenewError });
    heartbeat.start();
    await vi.advanceTimersByTimeAsync(1_000 + timing.renewRetryMs);
    expect(renew).toHaveBeenCalledTimes(2);
    expect(onRenewError).toHaveBeenCalledTimes(1);
    expect(controller.signal.aborted).toBe(false);
    expect(heartbeat.count).toBe(1);
    await heartbeat.stop();
  });

  it('gives the lease up before it lapses when no renewal can be confirmed', async () => {
    const { controller } = start(async () => {
      throw new Error('ECONNRESET');
    });
    await vi.advanceTimersByTimeAsync(timing.renewDeadlineMs - 1);
    expect(controller.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(2);
    expect(controller.signal.aborted).toBe(true);
    expect(controller.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(String(controller.signal.reason.message)).toMatch(/no renewal confirmed within 2000 ms/);
    expect(Date.now()).toBeLessThan(lease.expiresAtMs);
  });

  it('stop() does not wait on a renewal that hangs: it aborts it', async () => {
    let aborted = false;
    const renew = vi.fn(
      (_held: HeldLease, signal?: AbortSignal) =>
        new Promise<HeldLease>((_resolve, reject) => {
          signal?.addEventListener('abort', () => {
            aborted = true;
            reject(signal.reason);
          });
        }),
    );
    const { heartbeat, controller } = start(renew);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(renew).toHaveBeenCalledTimes(1);
    await heartbeat.stop();
    expect(aborted).toBe(true);
    expect(controller.signal.aborted).toBe(false);
  });

  it('measures the renew deadline from the request, not the (late) response', async () => {
    // DynamoDB computed the new expiry when the request started; the answer took 900 ms.
    const renew = vi.fn(async (held: HeldLease) => {
      const requestedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 900));
      return { ...held, expiresAtMs: requestedAt + timing.durationMs };
    });
    const { controller } = start(async (held) => {
      if (renew.mock.calls.length === 0) return renew(held);
      throw new Error('ECONNRESET');
    });
    await vi.advanceTimersByTimeAsync(1_900); // renewed at t=1000 (answer at 1900)
    await vi.advanceTimersByTimeAsync(1_000 + timing.renewDeadlineMs - 1_900 - 1);
    expect(controller.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(2);
    expect(controller.signal.aborted).toBe(true); // 1000 + renewDeadline, not 1900 + renewDeadline
  });

  it('aborts a holder that was frozen past its lease as soon as it runs again', async () => {
    const renew = vi.fn(async (held: HeldLease) => ({ ...held, expiresAtMs: Date.now() + timing.durationMs }));
    const { controller } = start(renew);
    // A frozen process: the wall clock jumps, timers fire late.
    vi.setSystemTime(10_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(controller.signal.aborted).toBe(true);
    expect(controller.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(renew).not.toHaveBeenCalled();
  });
});
