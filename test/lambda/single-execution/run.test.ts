/**
 * runExclusively with in-memory ports and a generic work function (no contests): the outcomes,
 * what the work receives, where the interval is marked done, the handoff, a lost lease and the
 * deadline. The DynamoDB adapters are tested in dynamo-lease.test.ts and fenced-writer.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { LeaseLostError, LeaseUnavailableError } from '../../../packages/scheduled-singleton/src/runtime/errors.js';
import type { FencedWriterPort, HeldLease, LeasePort } from '../../../packages/scheduled-singleton/src/runtime/ports.js';
import { runExclusively, runUnfenced } from '../../../packages/scheduled-singleton/src/runtime/run.js';
import { leaseTiming } from '../../../packages/scheduled-singleton/src/runtime/timing.js';

const timing = leaseTiming(10);
const interval = '2026-11-29T14:00:00Z';

function ports(held: Partial<HeldLease> = {}) {
  const lease: HeldLease = { runId: 'run-1', fence: 5, expiresAtMs: Date.now() + 10_000, ledger: new Set(), handoff: new Set(), ...held };
  const port: LeasePort = {
    acquire: vi.fn(async () => ({ acquired: true as const, lease })),
    renew: vi.fn(async (l: HeldLease) => l),
    release: vi.fn(async () => true),
    releaseLanded: vi.fn(async () => true),
    fenceCheck: vi.fn(() => ({ ConditionCheck: { TableName: 'coordination', Key: { pk: 'lease#job' }, ConditionExpression: 'x' } })),
  };
  const writer = {
    commit: vi.fn<FencedWriterPort['commit']>(async (actions, fence) => {
      fence(true);
      return { transactions: actions.length > 0 ? 1 : 0 };
    }),
  };
  return { lease: port, writer, timing, now: Date.now, runRecordPrefix: 'run#job#', sleep: async () => undefined };
}

const run = { runId: 'run-1', source: 'schedule', interval, remainingMs: () => 60_000 };
const put = { Put: { TableName: 'data', Item: { pk: 'beat' } } };

describe('runExclusively', () => {
  it('gives the work its signal, deadline, fence and handoff, and returns its value with the fence', async () => {
    const deps = ports({ handoff: new Set(['a']) });
    const outcome = await runExclusively(
      run,
      async (ctx) => ({ fence: ctx.fence, handoff: [...ctx.handoff], aborted: ctx.signal.aborted }),
      deps,
    );
    expect(outcome).toEqual({ outcome: 'succeeded', fence: 5, value: { fence: 5, handoff: ['a'], aborted: false }, heartbeats: 0 });
    // The handoff received was dealt with: removed at release; the run record has the job's prefix.
    expect(deps.lease.release).toHaveBeenCalledWith(
      expect.anything(),
      expect.objectContaining({
        doneInterval: interval,
        resolved: ['a'],
        runRecord: expect.objectContaining({ pk: `run#job#${interval}`, outcome: 'succeeded' }),
      }),
      expect.any(AbortSignal),
    );
  });

  it('marks the interval done with the final commit, and records what is handed over with every transaction', async () => {
    const deps = ports({ handoff: new Set(['a', 'b']) });
    await runExclusively(run, async (ctx) => ctx.commit([put], { final: true, handoff: ['b', 'c'] }), deps);
    expect(deps.lease.fenceCheck).toHaveBeenCalledWith(expect.anything(), { handoff: ['b', 'c'], doneInterval: interval });
    // Recorded so that a crash leaves them to the next run; the run succeeded, so it dealt with all of them.
    expect(vi.mocked(deps.lease.release).mock.calls[0]?.[1].resolved).toEqual(['a', 'b', 'c']);
  });

  it('leaves to the next run what it keeps, received or recorded by its commits; what it neither received nor recorded is not added', async () => {
    const deps = ports({ handoff: new Set(['a', 'b']) });
    await runExclusively(
      run,
      async (ctx) => {
        await ctx.commit([put], { handoff: ['c', 'd'] });
        ctx.keep(['b', 'c', 'z']);
      },
      deps,
    );
    expect(vi.mocked(deps.lease.release).mock.calls[0]?.[1].resolved).toEqual(['a', 'd']);
  });

  it('keeps handed-over entries a run without writes could not settle; entries it never received are not added', async () => {
    const deps = ports({ handoff: new Set(['a', 'b']) });
    await runExclusively(run, async (ctx) => ctx.keep(['b', 'z']), deps);
    expect(deps.writer.commit).not.toHaveBeenCalled();
    expect(vi.mocked(deps.lease.release).mock.calls[0]?.[1].resolved).toEqual(['a']);
  });

  it('tells the work when the job last succeeded on schedule: the start of the latest interval in the ledger', async () => {
    const slots = [Date.parse('2026-11-29T12:00:00Z') / 60_000, Date.parse('2026-11-29T13:00:00Z') / 60_000];
    const seen = await runExclusively(run, async (ctx) => ctx.lastSucceededMs, ports({ ledger: new Set(slots) }));
    expect(seen).toMatchObject({ value: Date.parse('2026-11-29T13:00:00Z') });
    const never = await runExclusively(run, async (ctx) => ctx.lastSucceededMs, ports());
    expect(never).toMatchObject({ outcome: 'succeeded', value: undefined });
  });

  it('never renews while its own commit is in flight (DynamoDB would refuse the renewal: the lease item is in the transaction)', async () => {
    const deps = ports();
    const timeline: string[] = [];
    let inFlight = 0;
    vi.mocked(deps.lease.renew).mockImplementation(async (l: HeldLease) => {
      timeline.push(inFlight > 0 ? 'renew during a commit' : 'renew');
      return { ...l, expiresAtMs: Date.now() + 10_000 };
    });
    deps.writer.commit.mockImplementation(async (actions, fence) => {
      inFlight += 1;
      fence(true);
      // Longer than the renewal period: the heartbeat comes due while this transaction is in flight.
      await new Promise((resolve) => setTimeout(resolve, timing.renewEveryMs + 200));
      inFlight -= 1;
      timeline.push('commit');
      return { transactions: 1 };
    });
    const outcome = await runExclusively(
      run,
      async (ctx) => {
        await ctx.commit([put]);
        await ctx.commit([put]);
      },
      deps,
    );
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ outcome: 'succeeded' });
    expect(timeline).toContain('renew');
    expect(timeline).not.toContain('renew during a commit');
    expect(timeline.indexOf('renew')).toBe(1); // after the first commit, before the second
  }, 20_000);

  it('skips with the holder, or already-done, without running the work', async () => {
    const deps = ports();
    vi.mocked(deps.lease.acquire).mockResolvedValueOnce({
      acquired: false,
      reason: 'lease-held',
      holder: 'run-0',
      expiresAtMs: 0,
      fence: 4,
    });
    const work = vi.fn(async () => 1);
    expect(await runExclusively(run, work, deps)).toEqual({
      outcome: 'skipped',
      reason: 'lease-held',
      holder: 'run-0',
      holderExpiresAt: '1970-01-01T00:00:00.000Z',
    });
    vi.mocked(deps.lease.acquire).mockResolvedValueOnce({ acquired: false, reason: 'already-done', interval });
    expect(await runExclusively(run, work, deps)).toEqual({ outcome: 'skipped', reason: 'already-done' });
    expect(work).not.toHaveBeenCalled();
  });

  it('reports a lease that could not be taken as failed "lease", and a work that lost it as "lease-lost"', async () => {
    const deps = ports();
    vi.mocked(deps.lease.acquire).mockRejectedValueOnce(new LeaseUnavailableError('could not acquire the lease: AccessDenied'));
    expect(await runExclusively(run, async () => 1, deps)).toMatchObject({ outcome: 'failed', reason: 'lease' });
    const lost = await runExclusively(
      run,
      async () => {
        throw new LeaseLostError('lease lost: taken over by run-2 (fence 6)', 'run-1', 5);
      },
      deps,
    );
    expect(lost).toMatchObject({ outcome: 'failed', reason: 'lease-lost', fence: 5 });
    expect(vi.mocked(deps.lease.release)).toHaveBeenCalledTimes(0); // a lost lease is not ours to release
  });

  it('reports a work error as failed "work" with the error, releases without marking the interval done', async () => {
    const deps = ports();
    const error = new Error('upstream down');
    expect(await runExclusively(run, async () => Promise.reject(error), deps)).toMatchObject({
      outcome: 'failed',
      reason: 'work',
      error,
      deadline: false,
    });
    expect(vi.mocked(deps.lease.release).mock.calls[0]?.[1].doneInterval).toBeUndefined();
  });

  it('aborts the work at the deadline (remaining time minus the stop margin) and says so', async () => {
    const deps = ports();
    const short = { ...run, remainingMs: () => timing.stopMarginMs + 50 };
    const outcome = await runExclusively(
      short,
      (ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error))),
      deps,
    );
    expect(outcome).toMatchObject({ outcome: 'failed', reason: 'work', deadline: true });
  });
});

describe('runExclusively release', () => {
  it('reads the lease back after any refused release: an attempt the SDK repeated may have landed first', async () => {
    const deps = ports();
    vi.mocked(deps.lease.release).mockResolvedValueOnce(false);
    vi.mocked(deps.lease.releaseLanded).mockResolvedValueOnce(true);
    expect(await runExclusively(run, async () => 1, deps)).toMatchObject({ outcome: 'succeeded' });
    vi.mocked(deps.lease.release).mockResolvedValueOnce(false);
    vi.mocked(deps.lease.releaseLanded).mockResolvedValueOnce(false);
    expect(await runExclusively(run, async () => 1, deps)).toMatchObject({ outcome: 'failed', reason: 'lease-lost' });
  });
});

describe('runUnfenced', () => {
  it('runs the work without the lease and refuses writes', async () => {
    const outcome = await runUnfenced(run, (ctx) => ctx.commit([put]), { timing, now: Date.now });
    expect(outcome).toMatchObject({ outcome: 'failed', deadline: false });
    expect(String((outcome as { error: unknown }).error)).toMatch(/without the lease cannot write/);
  });
});
