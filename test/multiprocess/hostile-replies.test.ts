/**
 * Hostile Codeforces replies (issue #8) fed to the bundled function (what `cdk deploy` uploads),
 * one child process per invocation, against DynamoDB Local and the local stand-in. Whatever the
 * reply, the result and every log line stay small, the run record is written, the lease is
 * released (test/support/hostile.ts), and the app's reminders are kept. The other sources' bundles
 * meet their hostile replies in hostile-sources.test.ts.
 */
import { describe, expect, inject, it } from 'vitest';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
import { MAX_BODY_BYTES } from '../../lambda/sources/codeforces/client.js';
import { LEASE_PK } from '../../lambda/contract.js';
import { cf } from '../support/ids.js';
import { addReminder, apiContest, sampleList, snapshot, type ApiContest } from '../support/contests.js';
import { expectContained as expectRunContained, intervalAt, leaseItem } from '../support/hostile.js';
import { invokeBundle, scheduledEvent, type InvocationOutcome } from '../support/processes.js';
import type { TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';

let standin: CodeforcesStandin;
let tables: TestTables;

useWorld('hostile', (world) => {
  ({ standin, tables } = world);
});

const MB = 1024 * 1024;

function invoke(event: unknown) {
  return invokeBundle({
    entry: inject('bundleEntry'),
    event,
    env: { ...tables.env, CODEFORCES_API_URL: standin.baseUrl, LEASE_DURATION_SECONDS: '10' },
  }).done;
}

/** A first, ordinary sync of the sample list, and reminders on every upcoming contest. */
async function seed(list: ApiContest[] = sampleList()) {
  standin.setContests(list);
  const first = await invoke({});
  expect(first.summary).toMatchObject({ outcome: 'succeeded' });
  const upcoming = list.filter((c) => c.phase === 'BEFORE');
  for (const c of upcoming) await addReminder(tables, c.id, `user-${c.id}`, 30, c.startTimeSeconds ?? 0);
  standin.requests.length = 0;
  return { upcoming, before: await snapshot(tables), fence: Number((await leaseItem(tables, LEASE_PK))?.fence) };
}

/** What every hostile run must leave (test/support/hostile.ts). */
const expectContained = (label: string, outcome: InvocationOutcome) =>
  expectRunContained(label, outcome, { tables, leaseKey: LEASE_PK, requests: standin.requests.length });

describe('hostile Codeforces replies (bundled function, issue #8)', { timeout: 120_000 }, () => {
  it('a 7 MB FAILED comment: console and scheduled runs fail small, release the lease, keep the data', async () => {
    const { before, fence } = await seed();
    const failed = { status: 400, body: { status: 'FAILED', comment: `contest.list: ${'x'.repeat(7 * MB)}` } };

    standin.enqueue(failed);
    const consoleRun = await invoke({});
    await expectContained('7 MB comment, console', consoleRun);
    expect(consoleRun.ok).toBe(true); // a console run returns its failure
    expect(consoleRun.summary).toMatchObject({ outcome: 'failed', reason: 'codeforces', fence: fence + 1 });
    expect(consoleRun.summary?.error).toMatch(/^CodeforcesError: Codeforces said FAILED: contest\.list: x+… \[cut from \d+ bytes\]$/);

    standin.enqueue(failed);
    const event = scheduledEvent(intervalAt(1));
    const scheduled = await invoke(event);
    await expectContained('7 MB comment, scheduled', scheduled);
    expect(scheduled.ok).toBe(false);
    expect(scheduled.error?.name).toBe('SyncFailedError');
    expect(scheduled.summary).toMatchObject({ outcome: 'failed', reason: 'codeforces', fence: fence + 2 });
    expect(standin.requests).toHaveLength(2); // not retried
    expect(await snapshot(tables)).toEqual(before);

    // The interval is not done: Lambda's retry runs it, with the lease free at once.
    const retry = await invoke(event);
    expect(retry.summary).toMatchObject({ outcome: 'succeeded', fence: fence + 3 });
  });

  it('every upcoming contest FINISHED before its start: not believed, reminders kept (short list: refused; long list: skipped)', async () => {
    const base = sampleList();
    const { upcoming, before } = await seed(base);
    expect(upcoming.length).toBeGreaterThanOrEqual(3);
    const lie = (list: ApiContest[]) => list.map((c) => (c.phase === 'BEFORE' ? { ...c, phase: 'FINISHED' as const } : c));

    // Most of a short list is a lie: the reply is refused.
    standin.setContests(lie(base));
    const refused = await invoke({});
    await expectContained('all FINISHED, short list', refused);
    expect(refused.summary).toMatchObject({ outcome: 'failed', reason: 'codeforces' });
    expect(refused.summary?.error).toMatch(/contests failed validation \(e\.g\. contest \d+: phase FINISHED but it starts in \d+ s\)/);
    expect(await snapshot(tables)).toEqual(before);

    // In a long list (like the real one) the lying entries are skipped and counted invalid.
    const history = Array.from({ length: 200 }, (_, i) => apiContest(1_000 + i, -24 * (60 + i)));
    standin.setContests([...lie(base), ...history]);
    const scheduled = await invoke(scheduledEvent(intervalAt(1)));
    await expectContained('all FINISHED, long list', scheduled);
    expect(scheduled.summary).toMatchObject({
      outcome: 'succeeded',
      counts: { contestsInvalid: upcoming.length, remindersPaused: 0, contestsRemoved: 0 },
    });
    const after = await snapshot(tables);
    expect(after.reminders).toEqual(before.reminders);
    for (const c of upcoming) expect(after.contests.find((item) => item.contestId === cf(c.id))).toMatchObject({ phase: 'BEFORE' });
  });

  it('one contest with a 500 KB name: the sync succeeds, that entry is counted invalid and not stored', async () => {
    // A list as long as a real one (about 2000 entries), so one invalid entry is well under a tenth.
    const history = Array.from({ length: 200 }, (_, i) => apiContest(1_000 + i, -24 * (60 + i)));
    const base = [...sampleList(), ...history];
    const { before } = await seed(base);
    const list = [...base, apiContest(2200, 96, { name: 'n'.repeat(500 * 1024) })];
    standin.setContests(list);
    const run = await invoke(scheduledEvent(intervalAt(1)));
    await expectContained('500 KB name', run);
    expect(run.summary).toMatchObject({ outcome: 'succeeded', counts: { contestsInvalid: 1 } });
    const after = await snapshot(tables);
    expect(after.contests.map((c) => c.contestId)).not.toContain(2200);
    expect(after.contests.length).toBe(before.contests.length);
    expect(after.reminders).toEqual(before.reminders);
    // The next hour is the same reply: the sync still succeeds (it used to fail in phase store forever).
    const next = await invoke(scheduledEvent(intervalAt(0)));
    expect(next.summary).toMatchObject({ outcome: 'succeeded', counts: { contestsInvalid: 1, contestsWritten: 0 } });
  });

  it('a body above the cap (gzipped, or streamed without Content-Length): refused as too-large, not retried', async () => {
    const { before, fence } = await seed();
    const huge = `{"status":"OK","result":[${' '.repeat(MAX_BODY_BYTES)}]}`;

    standin.enqueue({ body: huge }); // gzipped: a small transfer that inflates above the cap
    const gzipped = await invoke({});
    await expectContained('oversized body, gzip', gzipped);
    expect(gzipped.summary).toMatchObject({ outcome: 'failed', reason: 'codeforces', fence: fence + 1 });
    expect(gzipped.summary?.error).toMatch(/^CodeforcesError: Codeforces reply refused: its body gunzips to more than \d+ bytes/);

    standin.enqueue({ body: huge, gzip: false, chunked: true });
    const streamed = await invoke(scheduledEvent(intervalAt(1)));
    await expectContained('oversized body, chunked', streamed);
    expect(streamed.summary).toMatchObject({ outcome: 'failed', reason: 'codeforces', fence: fence + 2 });
    expect(streamed.summary?.error).toMatch(/went past \d+ bytes while streaming/);
    expect(standin.requests).toHaveLength(2);
    expect(await snapshot(tables)).toEqual(before);
  });
});
