/**
 * runExclusively with in-memory ports and a generic work function (no contests): the outcomes,
 * what the work receives, where the interval is marked done, the handoff, a lost lease and the
 * deadline. The DynamoDB adapters are tested in dynamo-lease.test.ts and fenced-writer.test.ts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ConditionalCheckFailedException,
  TransactionCanceledException,
  TransactionConflictException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import {
  DynamoFencedWriter,
  DynamoLease,
  FencedWriteError,
  LeaseLostError,
  MAX_RELEASE_WRITES,
  OutboxEventError,
  LeaseUnavailableError,
  MAX_WRITES_PER_TRANSACTION,
  leaseTiming,
  runExclusively,
  runUnfenced,
  type FencedWriterPort,
  type HeldLease,
  type LeasePort,
} from '@contest-sync/scheduled-singleton';

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
    commit: vi.fn<FencedWriterPort['commit']>(async (actions, fence, _signal, _outbox, turn = (transaction) => transaction()) =>
      turn(async () => {
        fence(true);
        return { transactions: actions.length > 0 ? 1 : 0 };
      }),
    ),
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
    deps.writer.commit.mockImplementation(async (_actions, fence, _signal, _outbox, turn = (transaction) => transaction()) =>
      turn(async () => {
        inFlight += 1;
        fence(true);
        // Longer than the renewal period: the heartbeat comes due while this transaction is in flight.
        await new Promise((resolve) => setTimeout(resolve, timing.renewEveryMs + 200));
        inFlight -= 1;
        timeline.push('commit');
        return { transactions: 1 };
      }),
    );
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

describe('runExclusively: the last writes ride with the release', () => {
  const outbox = { table: 'outbox', source: 'jobs', retentionDays: 7 };
  const event = { id: 'beat#1', detailType: 'Beat', detail: { beat: 1 } };
  const releaseCall = (deps: ReturnType<typeof ports>, index = 0) => vi.mocked(deps.lease.release).mock.calls[index]?.[1];

  it('leaves the actions and their events to the release, which marks the interval done: no transaction of their own', async () => {
    const deps = { ...ports(), outbox };
    const outcome = await runExclusively(run, async (ctx) => ctx.releaseWith([put], { events: [event] }), deps);
    expect(outcome).toMatchObject({ outcome: 'succeeded' });
    expect(deps.writer.commit).not.toHaveBeenCalled();
    expect(releaseCall(deps)).toMatchObject({
      doneInterval: interval,
      actions: [put],
      outbox: [{ Put: expect.objectContaining({ TableName: 'outbox', Item: expect.objectContaining({ pk: 'jobs#beat#1', fence: 5 }) }) }],
      runRecord: expect.objectContaining({ outcome: 'succeeded' }),
    });
  });

  it('writes none of them when the work fails after leaving them, or returns after its deadline', async () => {
    const deps = ports();
    const outcome = await runExclusively(
      run,
      async (ctx) => {
        ctx.releaseWith([put]);
        throw new Error('boom');
      },
      deps,
    );
    expect(outcome).toMatchObject({ outcome: 'failed', reason: 'work' });
    expect(releaseCall(deps)).not.toHaveProperty('actions');
    expect(releaseCall(deps)).not.toHaveProperty('doneInterval');
  });

  it('fails the run when DynamoDB refuses one of them, and releases again without them, the interval not done', async () => {
    const deps = ports();
    const refused = new FencedWriteError('a write was refused by its condition', { refused: [put] });
    vi.mocked(deps.lease.release).mockRejectedValueOnce(refused);
    const outcome = await runExclusively(run, async (ctx) => ctx.releaseWith([put]), deps);
    expect(outcome).toMatchObject({ outcome: 'failed', reason: 'work', error: refused });
    expect(deps.lease.release).toHaveBeenCalledTimes(2); // not retried: it would be refused again
    expect(releaseCall(deps, 1)).not.toHaveProperty('actions');
    expect(releaseCall(deps, 1)).not.toHaveProperty('doneInterval');
    expect(releaseCall(deps, 1)?.runRecord).toMatchObject({ outcome: 'failed' });
  });

  it('reports lease-lost when the release carrying them is refused, even after a final commit marked the interval done', async () => {
    const deps = ports();
    vi.mocked(deps.lease.release).mockResolvedValueOnce(false);
    vi.mocked(deps.lease.releaseLanded).mockResolvedValueOnce(false);
    const outcome = await runExclusively(
      run,
      async (ctx) => {
        await ctx.commit([put], { final: true });
        ctx.releaseWith([put]);
      },
      deps,
    );
    expect(outcome).toMatchObject({ outcome: 'failed', reason: 'lease-lost' });
  });

  it('refuses, where they are left, more than one transaction can carry, and events without an outbox', async () => {
    const deps = ports();
    const many = Array.from({ length: MAX_RELEASE_WRITES + 1 }, (_, i) => ({ Put: { TableName: 'data', Item: { pk: `x${i}` } } }));
    let thrown: unknown;
    const outcome = await runExclusively(
      run,
      async (ctx) => {
        ctx.releaseWith(many.slice(0, MAX_RELEASE_WRITES));
        try {
          ctx.releaseWith([many.at(-1)!]);
        } catch (error) {
          thrown = error;
        }
        ctx.releaseWith([], { events: [event] });
      },
      deps,
    );
    expect(thrown).toBeInstanceOf(FencedWriteError);
    expect(String(thrown)).toMatch(/at most 98 writes/);
    expect(outcome).toMatchObject({ outcome: 'failed', reason: 'work', error: expect.any(OutboxEventError) });
  });
});

describe('runUnfenced', () => {
  it('runs the work without the lease and refuses writes', async () => {
    const outcome = await runUnfenced(run, (ctx) => ctx.commit([put]), { timing, now: Date.now });
    expect(outcome).toMatchObject({ outcome: 'failed', deadline: false });
    expect(String((outcome as { error: unknown }).error)).toMatch(/without the lease cannot write/);
    const left = await runUnfenced(run, async (ctx) => ctx.releaseWith([put]), { timing, now: Date.now });
    expect(String((left as { error: unknown }).error)).toMatch(/without the lease cannot write/);
  });
});

/**
 * DynamoDB as the lease sees it, for one lease item and the data transactions fenced by it: each
 * data transaction takes `transactionMs` (on the global timer: fake timers drive it); while one is
 * in flight, a plain write to the lease item (a renewal) is refused with
 * TransactionConflictException, as DynamoDB does; a transaction whose lease check no longer holds
 * when it commits is cancelled at the lease action (ConditionalCheckFailed).
 */
class SlowDynamo {
  holder: string | undefined;
  fence = 0;
  expiresAtMs = 0;
  inFlight = 0;
  conflicts = 0;
  /** What happened, in order: renewals with the time they computed, transactions with their lease action's time. */
  readonly timeline: ({ kind: 'renew'; atMs: number } | { kind: 'transaction'; checkAtMs: number; startMs: number; endMs: number })[] = [];

  constructor(
    private readonly transactionMs: number,
    private readonly now: () => number,
  ) {}

  /** The lease's own requests come as low-level commands, the fenced transactions as the document client's. */
  readonly send = async (command: unknown): Promise<Record<string, unknown>> => {
    if (command instanceof TransactWriteCommand) return this.transact(command.input.TransactItems ?? []);
    if (command instanceof TransactWriteItemsCommand) return {}; // the release with its run record
    if (!(command instanceof UpdateItemCommand)) throw new Error('unexpected command');
    if (this.inFlight > 0) {
      this.conflicts += 1;
      throw new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: {} });
    }
    const values = unmarshall(command.input.ExpressionAttributeValues ?? {});
    if (command.input.UpdateExpression?.includes('ADD fence')) {
      Object.assign(this, { holder: String(values[':runId']), fence: this.fence + 1, expiresAtMs: Number(values[':exp']) });
      return { Attributes: marshall({ pk: 'lease#job', holder: this.holder, fence: this.fence, expiresAtMs: this.expiresAtMs }) };
    }
    if (!this.holds(values)) throw new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
    if (values[':exp'] !== undefined) {
      this.expiresAtMs = Number(values[':exp']);
      this.timeline.push({ kind: 'renew', atMs: Number(values[':now']) });
    }
    return {};
  };

  private holds(values: Record<string, unknown>): boolean {
    return this.holder === values[':runId'] && this.fence === values[':fence'] && this.expiresAtMs > this.now();
  }

  private async transact(items: readonly Record<string, { ExpressionAttributeValues?: Record<string, unknown> }>[]) {
    const lease = items[0]?.ConditionCheck ?? items[0]?.Update;
    const startMs = this.now();
    this.inFlight += 1;
    await new Promise((resolve) => setTimeout(resolve, this.transactionMs));
    this.inFlight -= 1;
    const values = lease?.ExpressionAttributeValues ?? {};
    if (!this.holds(values)) {
      throw new TransactionCanceledException({
        message: 'Transaction cancelled',
        $metadata: {},
        CancellationReasons: items.map((_, i) => ({ Code: i === 0 ? 'ConditionalCheckFailed' : 'None' })),
      });
    }
    this.timeline.push({ kind: 'transaction', checkAtMs: Number(values[':now']), startMs, endMs: this.now() });
    return {};
  }
}

describe('runExclusively: a lease that holds through any commit', () => {
  afterEach(() => vi.useRealTimers());

  it('keeps a 3 s lease through one commit of 30 transactions of 400 ms (12 s): renewals take turns with each transaction', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-29T14:00:30Z') });
    const leaseTiming3s = leaseTiming(3);
    const dynamo = new SlowDynamo(400, Date.now);
    const doc = dynamo as unknown as DynamoDBDocumentClient;
    const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
    const deps = {
      lease: new DynamoLease({
        doc,
        table: 'coordination',
        key: 'lease#job',
        timing: leaseTiming3s,
        now: Date.now,
        sleep,
        random: () => 0.5,
      }),
      writer: new DynamoFencedWriter(doc, { now: Date.now, sleep, random: () => 0.5 }),
      timing: leaseTiming3s,
      now: Date.now,
      runRecordPrefix: 'run#job#',
      sleep,
    };
    const moves = Array.from({ length: 30 * MAX_WRITES_PER_TRANSACTION }, (_, i) => ({
      Update: {
        TableName: 'reminders',
        Key: { contestId: i, userId: 'u' },
        UpdateExpression: 'SET dueAt = :d',
        ExpressionAttributeValues: { ':d': i },
      },
    }));
    const outcome = runExclusively(run, async (ctx) => (await ctx.commit(moves, { final: true })).transactions, deps);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(await outcome, JSON.stringify(await outcome)).toMatchObject({ outcome: 'succeeded', value: 30 });

    const transactions = dynamo.timeline.filter((entry) => entry.kind === 'transaction');
    const renewals = dynamo.timeline.filter((entry) => entry.kind === 'renew');
    expect(transactions).toHaveLength(30);
    expect(transactions.at(-1)!.endMs - transactions[0]!.startMs).toBeGreaterThan(3 * leaseTiming3s.durationMs);
    // About one renewal a second, each between two transactions (none ever conflicted with one).
    expect(renewals.length).toBeGreaterThanOrEqual(10);
    expect(dynamo.conflicts).toBe(0);
    const confirmed = [transactions[0]!.startMs, ...renewals.map((renewal) => renewal.atMs), transactions.at(-1)!.endMs];
    const gaps = confirmed.slice(1).map((at, i) => at - confirmed[i]!);
    expect(Math.max(...gaps)).toBeLessThan(leaseTiming3s.renewDeadlineMs);
    // Each transaction's lease action was built in its turn, after every renewal before it.
    dynamo.timeline.forEach((entry, i) => {
      if (entry.kind !== 'transaction') return;
      const before = dynamo.timeline.slice(0, i).filter((e) => e.kind === 'renew');
      for (const renewal of before) expect(entry.checkAtMs).toBeGreaterThanOrEqual(renewal.atMs);
    });
  });
});
