/**
 * The contract of the ports, one suite for every implementation: DynamoLease + DynamoFencedWriter
 * on DynamoDB Local (../runtime/lease-contract.local.test.ts) and MemoryLease + MemoryFencedWriter
 * (memory.test.ts) must pass the same cases — ownership-conditional renew and release, expiry by
 * the attribute and the clock, fencing, the interval ledger, the handoff.
 */
import { describe, expect, it } from 'vitest';
import {
  LeaseLostError,
  ledgerRetentionMs,
  leaseTiming,
  type FencedWriterPort,
  type HeldLease,
  type LeasePort,
  type LeaseTiming,
  type TransactAction,
} from '@contest-sync/scheduled-singleton';

export interface ContractBackend {
  /** The lease of a fresh key on the backend's store, on the given clock, and its writer. */
  open(key: string, timing: LeaseTiming, now: () => number): { lease: LeasePort; writer: FencedWriterPort };
  /** The table the data actions write to (partition key `pk`, String). */
  table: string;
  /** The item with `pk` as the backend holds it now, if written. */
  read(pk: string): Promise<Record<string, unknown> | undefined>;
}

const interval = '2026-11-30T12:05:00Z';
const other = '2026-11-30T12:10:00Z';

export function leaseContract(name: string, backend: () => ContractBackend): void {
  describe(`the lease and writer contract: ${name}`, () => {
    const timing = leaseTiming(10);
    let clock = Date.parse('2026-11-30T12:06:00Z');
    let keys = 0;
    const now = () => clock;
    function open() {
      keys += 1;
      return backend().open(`lease#contract-${name}-${keys}-${Math.random().toString(36).slice(2, 8)}`, timing, now);
    }
    async function take(lease: LeasePort, runId: string, at?: string): Promise<HeldLease> {
      const got = await lease.acquire(runId, 'schedule', at);
      if (!got.acquired) throw new Error(`${runId} could not acquire: ${JSON.stringify(got)}`);
      return got.lease;
    }
    const put = (pk: string, extra: Record<string, unknown> = {}): TransactAction => ({
      Put: { TableName: backend().table, Item: { pk, ...extra } },
    });
    const fenced =
      (lease: LeasePort, held: HeldLease, extras = {}) =>
      (_last: boolean) =>
        lease.fenceCheck(held, extras);

    it('acquires a free lease with fence 1 and an expiry one duration out; a contender learns holder, expiry and fence', async () => {
      const { lease } = open();
      const a = await take(lease, 'run-a');
      expect(a).toMatchObject({ runId: 'run-a', fence: 1, expiresAtMs: clock + timing.durationMs });
      expect(await lease.acquire('run-b', 'schedule', undefined)).toEqual({
        acquired: false,
        reason: 'lease-held',
        holder: 'run-a',
        expiresAtMs: clock + timing.durationMs,
        fence: 1,
      });
    });

    it("treats the holder's repeated acquisition as its own", async () => {
      const { lease } = open();
      const first = await take(lease, 'run-a');
      expect(await lease.acquire('run-a', 'schedule', undefined)).toEqual({ acquired: true, lease: first });
    });

    it('expires by the expiry attribute and the clock: held a millisecond before, free at the instant; the fence increments', async () => {
      const { lease } = open();
      const start = clock;
      await take(lease, 'run-a');
      clock = start + timing.durationMs - 1;
      expect(await lease.acquire('run-b', 'schedule', undefined)).toMatchObject({ acquired: false, reason: 'lease-held' });
      clock = start + timing.durationMs;
      expect(await take(lease, 'run-b')).toMatchObject({ runId: 'run-b', fence: 2 });
    });

    it('renews only for the holder of this fence, unexpired', async () => {
      const { lease } = open();
      const start = clock;
      const a = await take(lease, 'run-a');
      clock = start + 3_000;
      expect(await lease.renew(a)).toMatchObject({ expiresAtMs: clock + timing.durationMs, fence: 1 });
      clock += timing.durationMs; // expired, nobody took it
      await expect(lease.renew(a)).rejects.toThrow(LeaseLostError);
      const b = await take(lease, 'run-b');
      await expect(lease.renew(a)).rejects.toThrow(/taken over by run-b/);
      expect(await lease.renew(b)).toMatchObject({ runId: 'run-b', fence: 2 });
    });

    it('releases only for the holder of this fence (expired or not); a released lease is free at once; releaseLanded tells whose landed', async () => {
      const { lease } = open();
      const a = await take(lease, 'run-a');
      clock += timing.durationMs; // expired, not taken over: still ours to free
      expect(await lease.release(a, { lastRun: { runId: 'run-a', fence: 1 } })).toBe(true);
      expect(await lease.releaseLanded(a)).toBe(true);
      const b = await take(lease, 'run-b');
      expect(await lease.release(a, {})).toBe(false);
      clock += timing.durationMs;
      const c = await take(lease, 'run-c');
      expect(await lease.release(b, {})).toBe(false);
      expect(await lease.releaseLanded(b)).toBe(false);
      expect(await lease.release(c, { lastRun: { runId: 'run-c', fence: c.fence } })).toBe(true);
      expect(await take(lease, 'run-d')).toMatchObject({ fence: 4 });
    });

    it('fences every transaction: the holder writes; a run taken over or expired writes nothing and gets LeaseLostError', async () => {
      const { lease, writer } = open();
      const tag = Math.random().toString(36).slice(2, 8);
      const a = await take(lease, 'run-a');
      expect(await writer.commit([put(`data#${tag}#1`, { fence: a.fence })], fenced(lease, a))).toEqual({ transactions: 1 });
      expect(await backend().read(`data#${tag}#1`)).toMatchObject({ fence: 1 });
      clock += timing.durationMs; // expired: refused although nobody took over
      await expect(writer.commit([put(`data#${tag}#2`)], fenced(lease, a))).rejects.toThrow(LeaseLostError);
      const b = await take(lease, 'run-b');
      await expect(writer.commit([put(`data#${tag}#3`)], fenced(lease, a))).rejects.toThrow(LeaseLostError);
      expect(await backend().read(`data#${tag}#2`)).toBeUndefined();
      expect(await backend().read(`data#${tag}#3`)).toBeUndefined();
      expect(await writer.commit([put(`data#${tag}#4`, { fence: b.fence })], fenced(lease, b))).toEqual({ transactions: 1 });
      expect(await backend().read(`data#${tag}#4`)).toMatchObject({ fence: 2 });
    });

    it('splits 150 actions into 2 transactions of at most 99 plus the lease action, each fenced', async () => {
      const { lease, writer } = open();
      const tag = Math.random().toString(36).slice(2, 8);
      const a = await take(lease, 'run-a');
      const lasts: boolean[] = [];
      const actions = Array.from({ length: 150 }, (_, i) => put(`data#${tag}#${i}`));
      expect(await writer.commit(actions, (last) => (lasts.push(last), lease.fenceCheck(a)))).toEqual({ transactions: 2 });
      expect(lasts).toEqual([false, true]);
      expect(await backend().read(`data#${tag}#149`)).toMatchObject({ pk: `data#${tag}#149` });
    });

    it('keeps the interval ledger: done by a fenced write or the release; a done interval is refused already-done, others and runs without one are not', async () => {
      const { lease, writer } = open();
      const a = await take(lease, 'run-a', interval);
      await writer.commit([put(`data#ledger#${Math.random()}`)], fenced(lease, a, { doneInterval: interval }));
      // Marked done by the write itself: even an unreleased, expired lease refuses the interval.
      clock += timing.durationMs;
      expect(await lease.acquire('run-b', 'schedule', interval)).toEqual({ acquired: false, reason: 'already-done', interval });
      const c = await take(lease, 'run-c', other);
      expect(await lease.release(c, { doneInterval: other })).toBe(true);
      expect(await lease.acquire('run-d', 'schedule', other)).toEqual({ acquired: false, reason: 'already-done', interval: other });
      const d = await take(lease, 'run-d');
      expect([...d.ledger].sort()).toEqual([Date.parse(interval) / 60_000, Date.parse(other) / 60_000]);
    });

    it('forgets an interval once no duplicate can arrive: one older than the retention runs again (not deduplicated)', async () => {
      const { lease } = open();
      const start = clock;
      const a = await take(lease, 'run-a', interval);
      expect(await lease.release(a, { doneInterval: interval })).toBe(true);
      clock = start + ledgerRetentionMs(60) + 10 * 60_000; // the hourly default: 5 h 05 min
      expect(await take(lease, 'run-b', interval)).toMatchObject({ runId: 'run-b' });
      clock = start;
    });

    it("releases with the work's last writes in one fenced transaction: written with the release, or not at all", async () => {
      const { lease } = open();
      const tag = Math.random().toString(36).slice(2, 8);
      const a = await take(lease, 'run-a', interval);
      const record = { pk: `run#contract#${tag}`, outcome: 'succeeded' };
      expect(
        await lease.release(a, { doneInterval: interval, runRecord: record, actions: [put(`data#${tag}#1`, { fence: a.fence })] }),
      ).toBe(true);
      expect(await backend().read(`data#${tag}#1`)).toMatchObject({ fence: a.fence });
      expect(await lease.acquire('run-b', 'schedule', interval)).toEqual({ acquired: false, reason: 'already-done', interval });
      // Carrying writes, the release needs the lease held and unexpired: expired (nobody took it), it writes nothing.
      const b = await take(lease, 'run-b', other);
      clock += timing.durationMs;
      expect(await lease.release(b, { doneInterval: other, actions: [put(`data#${tag}#2`)] })).toBe(false);
      expect(await backend().read(`data#${tag}#2`)).toBeUndefined();
      const c = await take(lease, 'run-c', other);
      expect(await lease.release(b, { actions: [put(`data#${tag}#3`)] })).toBe(false); // taken over
      expect(await backend().read(`data#${tag}#3`)).toBeUndefined();
      expect(await lease.release(c, { doneInterval: other })).toBe(true);
    });

    it('hands entries over: added by fenced writes, seen by the next holder, removed when resolved at release', async () => {
      const { lease, writer } = open();
      const a = await take(lease, 'run-a');
      await writer.commit([put(`data#handoff#${Math.random()}`)], fenced(lease, a, { handoff: ['x', 'y'] }));
      expect(await lease.release(a, {})).toBe(true);
      const b = await take(lease, 'run-b');
      expect([...b.handoff].sort()).toEqual(['x', 'y']);
      expect(await lease.release(b, { resolved: ['x'] })).toBe(true);
      expect([...(await take(lease, 'run-c')).handoff]).toEqual(['y']);
    });
  });
}
