/**
 * `@contest-sync/scheduled-singleton/testing` as a job's unit test uses it: the wrapper on the
 * in-memory store through every invocation source (a scheduled tick, the deploy-time run, a console
 * run, a dry run), a lost lease, and the deadline — honoured (the error is the RunDeadlineError
 * the README names) and ignored (not a success, late commits refused, no renewal after it).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunDeadlineError, scheduledSingleton, worstCallMs } from '@contest-sync/scheduled-singleton';
import { consoleRun, deployRun, dryRun, lambdaContext, scheduledTick, testJob } from '@contest-sync/scheduled-singleton/testing';

const at = Date.parse('2026-11-30T12:07:00Z');
/** A wait on the global timer (faked in the deadline cases), deaf to any signal. */
const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A job keyed by interval that handles the runs without one explicitly (as the README's). */
const report = scheduledSingleton(
  async ({ interval, source, fence, commit, log }) => {
    if (interval === undefined) {
      log.info('no interval to report', { source });
      return { report: null };
    }
    const Item = { pk: `report#${interval}`, fence };
    await commit([{ Put: { TableName: process.env.TABLE_NAME, Item } }], { final: true });
    return { report: Item.pk };
  },
  { summary: (value) => value },
);

describe('testJob: the wrapper on the in-memory store', () => {
  it('a tick writes its interval once; the same interval again is already-done; a console interval too', async () => {
    const job = testJob(report, { periodMinutes: 5, now: () => at, env: { TABLE_NAME: 'reports' } });
    const first = await job.invoke(scheduledTick(at));
    expect(first).toMatchObject({
      threw: false,
      result: {
        outcome: 'succeeded',
        source: 'schedule',
        interval: '2026-11-30T12:05:00Z',
        fence: 1,
        report: 'report#2026-11-30T12:05:00Z',
      },
    });
    expect(first.summary).toMatchObject({ summary: true, message: 'succeeded', service: 'job' });
    expect(first.metrics).toMatchObject({ RunSucceeded: 1, RunFailed: 0, RunSkipped: 0, LeaseLost: 0 });
    expect((await job.invoke(scheduledTick(at + 60_000))).result).toMatchObject({ outcome: 'skipped', reason: 'already-done' });
    expect((await job.invoke(consoleRun({ interval: '2026-11-30T12:05:00Z' }))).result).toMatchObject({
      outcome: 'skipped',
      reason: 'already-done',
    });
    expect((await job.invoke(consoleRun({ interval: '2026-11-30T12:05:00Z', force: true }))).result).toMatchObject({
      outcome: 'succeeded',
      fence: 2,
    });
    expect(job.coordination.puts('reports').map((item) => item.pk)).toEqual(['report#2026-11-30T12:05:00Z', 'report#2026-11-30T12:05:00Z']);
    expect([...job.coordination.runRecords.keys()]).toEqual(['run#job#2026-11-30T12:05:00Z', expect.stringMatching(/^run#job#console#/)]);
  });

  it('the deploy-time run and a console {} run without an interval; a dry run without the lease: none writes', async () => {
    const job = testJob(report, { now: () => at, env: { TABLE_NAME: 'reports' } });
    const runs = [await job.invoke(deployRun()), await job.invoke(consoleRun()), await job.invoke(dryRun())];
    expect(runs.map((run) => [run.result.source, run.result.outcome, run.result.interval, run.result.dryRun])).toEqual([
      ['deploy', 'succeeded', undefined, undefined],
      ['console', 'succeeded', undefined, undefined],
      ['console', 'succeeded', undefined, true],
    ]);
    expect(job.coordination.puts()).toEqual([]);
    // Only the two runs under the lease took it (fences 1 and 2); the dry run left no record.
    expect(job.coordination.leases.get('lease#job')?.fence).toBe(2);
  });

  it('two ticks at once: one succeeds, the other skips; a failed scheduled run throws (Lambda retries it) and is not done', async () => {
    let fail = true;
    const flaky = scheduledSingleton(async ({ commit, interval }) => {
      await sleep(5);
      if (fail) throw new Error('upstream down');
      await commit([{ Put: { TableName: 'reports', Item: { pk: `report#${interval}` } } }], { final: true });
    });
    const job = testJob(flaky, { now: () => at });
    const tick = scheduledTick(at);
    const both = await Promise.all([job.invoke(tick), job.invoke(tick)]);
    expect(both.map((run) => run.result.outcome).sort()).toEqual(['failed', 'skipped']);
    const failed = both.find((run) => run.result.outcome === 'failed')!;
    expect(failed).toMatchObject({ threw: true, result: { reason: 'work', error: 'Error: upstream down' }, metrics: { RunFailed: 1 } });
    fail = false;
    expect((await job.invoke(tick)).result).toMatchObject({ outcome: 'succeeded' });
  });

  it('a run whose lease was taken over mid-run writes nothing and fails lease-lost', async () => {
    const holder: { store?: ReturnType<typeof testJob>['coordination'] } = {};
    const stolen = scheduledSingleton(async ({ commit }) => {
      holder.store?.lease.takeOver('run-elsewhere');
      await commit([{ Put: { TableName: 'reports', Item: { pk: 'x' } } }], { final: true });
    });
    const job = testJob(stolen, { now: () => at });
    holder.store = job.coordination;
    const run = await job.invoke(scheduledTick(at));
    expect(run).toMatchObject({ threw: true, result: { outcome: 'failed', reason: 'lease-lost' }, metrics: { LeaseLost: 1 } });
    expect(job.coordination.puts()).toEqual([]);
  });

  it('refuses a handler scheduledSingleton did not make', () => {
    expect(() => testJob((async () => ({})) as never)).toThrow(/expected the handler scheduledSingleton/);
  });
});

describe('the deadline (Lambda remaining time minus the stop margin)', () => {
  // Lease 3 s: renew every 1 s. The invocation starts with the least time the timing accepts plus
  // 0.9 s, so the deadline comes 1.9 s in: one renewal before it, none after.
  const stopMarginMs = worstCallMs() + 1_000;
  const remainingMs = stopMarginMs + 1_000 + 900;
  let start: number;
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(at);
    start = Date.now();
  });
  afterEach(() => vi.useRealTimers());

  async function invokeOver(job: ReturnType<typeof testJob>, ms: number) {
    const pending = job.invoke(scheduledTick(at, { remainingMs }));
    await vi.advanceTimersByTimeAsync(ms);
    return pending;
  }

  it('honoured: the signal aborts with RunDeadlineError (signal.reason); the run reports it, failed work deadline', async () => {
    const seen: unknown[] = [];
    const patient = scheduledSingleton(async ({ signal, deadline }) => {
      seen.push(deadline);
      try {
        await sleep(60_000, undefined, { signal });
      } finally {
        seen.push(signal.reason);
      }
    });
    const run = await invokeOver(testJob(patient, { leaseSeconds: 3 }), 5_000);
    expect(seen[0]).toBe(start + remainingMs - stopMarginMs);
    expect(seen[1]).toBeInstanceOf(RunDeadlineError);
    expect(run).toMatchObject({
      threw: true,
      result: {
        outcome: 'failed',
        reason: 'work',
        deadline: true,
        error: expect.stringMatching(/^RunDeadlineError: the run reached its deadline/),
      },
    });
  });

  it('ignored: the late commit is refused with RunDeadlineError, nothing is written, no renewal is sent after the deadline', async () => {
    const stubborn = scheduledSingleton(async ({ commit }) => {
      await wait(4_000); // ignores the signal
      await commit([{ Put: { TableName: 'reports', Item: { pk: 'late' } } }], { final: true });
    });
    const job = testJob(stubborn, { leaseSeconds: 3 });
    const run = await invokeOver(job, 6_000);
    const deadline = start + remainingMs - stopMarginMs;
    expect(run.result).toMatchObject({
      outcome: 'failed',
      reason: 'work',
      deadline: true,
      error: expect.stringMatching(/^RunDeadlineError/),
    });
    expect(job.coordination.puts()).toEqual([]);
    expect(job.coordination.renewals.map((r) => r.renewedAtMs - start)).toEqual([1_000]);
    expect(job.coordination.renewals.every((r) => r.renewedAtMs < deadline)).toBe(true);
    // Not done: the retry runs the interval.
    expect(job.coordination.leases.get('lease#job')?.ledger.size).toBe(0);
  });

  it('ignored: work that returns after the deadline is reported failed (deadline), not succeeded, and the interval is not done', async () => {
    const slow = scheduledSingleton(async () => {
      await wait(3_000); // ignores the signal
      return { rows: 0 };
    });
    const job = testJob(slow, { leaseSeconds: 3 });
    const run = await invokeOver(job, 4_000);
    expect(run).toMatchObject({
      threw: true,
      result: {
        outcome: 'failed',
        reason: 'work',
        deadline: true,
        error: expect.stringMatching(/returned 1100 ms after the run's deadline/),
      },
    });
    expect(run.metrics).toMatchObject({ RunSucceeded: 0, RunFailed: 1 });
    expect(job.coordination.leases.get('lease#job')?.ledger.size).toBe(0);
  });

  it('a dry run that returns after its deadline is not a success either', async () => {
    const slow = scheduledSingleton(async () => {
      await wait(3_000);
    });
    const job = testJob(slow, { leaseSeconds: 3 });
    const pending = job.invoke(dryRun({}, { remainingMs }));
    await vi.advanceTimersByTimeAsync(4_000);
    expect((await pending).result).toMatchObject({ outcome: 'failed', deadline: true, dryRun: true });
  });

  it('lambdaContext counts down from its creation', async () => {
    const context = lambdaContext({ remainingMs: 10_000 });
    await vi.advanceTimersByTimeAsync(4_000);
    expect(context.getRemainingTimeInMillis()).toBe(6_000);
  });
});

describe('testJob: a job that publishes events', () => {
  const beat = scheduledSingleton(
    async ({ interval, runId, commit }) => {
      const result = await commit([], {
        final: true,
        events: [{ id: `beat#${interval ?? runId}`, detailType: 'Beat', detail: { interval } }],
      });
      return { events: result.events };
    },
    { summary: (value) => value },
  );

  it('lists each event once in events(); the same change again (a forced rerun) is a duplicate, not a second event', async () => {
    const job = testJob(beat, { periodMinutes: 5, now: () => at, eventSource: 'beats' });
    expect((await job.invoke(scheduledTick(at))).result).toMatchObject({ outcome: 'succeeded', events: { written: 1, duplicates: 0 } });
    expect((await job.invoke(consoleRun({ interval: '2026-11-30T12:05:00Z', force: true }))).result).toMatchObject({
      outcome: 'succeeded',
      events: { written: 0, duplicates: 1 },
    });
    expect(job.coordination.events()).toEqual([
      {
        id: 'beat#2026-11-30T12:05:00Z',
        source: 'beats',
        detailType: 'Beat',
        detail: { eventId: 'beat#2026-11-30T12:05:00Z', interval: '2026-11-30T12:05:00Z' },
      },
    ]);
  });

  it('a job without an outbox that publishes fails its run with the OutboxEventError', async () => {
    const job = testJob(beat, { periodMinutes: 5, now: () => at });
    const run = await job.invoke(consoleRun());
    expect(run.result).toMatchObject({ outcome: 'failed', reason: 'work' });
    expect(run.result.error).toMatch(/OutboxEventError: this job has no outbox/);
    expect(job.coordination.events()).toEqual([]);
  });
});
