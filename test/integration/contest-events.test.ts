/**
 * The sync's contest events on DynamoDB Local, with the outbox table of the synthesized template
 * (docs/events.md, "Contest events"): what two replies agree on is published once, in the
 * sync's own fenced transaction (a withdrawal a day after the first miss); a run whose commit answer was lost, or a second run, publishes
 * nothing twice; a dry run lists the events and writes none.
 */
import { describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { EVENT_SOURCES } from '../../lambda/contract.js';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
import { sampleList, scanAll } from '../support/contests.js';
import { localHandler } from '../support/handler.js';
import type { TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';
import { cf } from '../support/ids.js';
import { replyClockId } from '../../lambda/contests/model.js';

let standin: CodeforcesStandin;
let tables: TestTables;
useWorld('events', (world) => {
  ({ standin, tables } = world);
});

interface Published {
  detailType: string;
  contestId: string;
  detail: Record<string, unknown>;
}

/** The outbox as the relay will deliver it: one line per item, in no particular order. */
async function outbox(): Promise<Published[]> {
  const items = await scanAll(tables.doc, tables.names.outbox!);
  for (const item of items) {
    expect(item.source).toBe(EVENT_SOURCES.contests);
    expect(item.pk).toBe(`${EVENT_SOURCES.contests}#${String(item.eventId)}`);
  }
  return items
    .map((item) => {
      const detail = JSON.parse(String(item.detail)) as Record<string, unknown>;
      expect(detail.eventId).toBe(item.eventId);
      // Version 2 of the detail: the qualified id, the platform and its own id; `contest` (deprecated) the same.
      expect(detail).toMatchObject({
        contest: detail.contestId,
        platform: 'codeforces',
        platformId: String(detail.contestId).split(':')[1],
      });
      return { detailType: String(item.detailType), contestId: String(detail.contestId), detail };
    })
    .sort((a, b) => a.contestId.localeCompare(b.contestId) || a.detailType.localeCompare(b.detailType));
}
const kinds = (events: Published[]) => events.map(({ detailType, contestId }) => `${contestId} ${detailType}`);

describe('contest events', () => {
  it('announces each upcoming contest once at its first sync; a run that changes nothing publishes nothing', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const first = await invoke({});
    expect(first.summary).toMatchObject({ outcome: 'succeeded', counts: { eventsPublished: 5, eventsDuplicate: 0 } });
    // 2100 is running and 2099 finished: no news for users.
    expect(kinds(await outbox())).toEqual([
      'codeforces:2101 ContestAnnounced',
      'codeforces:2102 ContestAnnounced',
      'codeforces:2103 ContestAnnounced',
      'codeforces:2104 ContestAnnounced',
      'codeforces:2105 ContestAnnounced',
    ]);
    const a2102 = (await outbox()).find((e) => e.contestId === cf(2102))!;
    expect(a2102.detail).toMatchObject({
      name: 'Educational Codeforces Round 190 (Rated for Div. 2)',
      type: 'ICPC',
      url: 'https://codeforces.com/contest/2102',
      durationSeconds: 7200,
    });
    expect((await invoke({})).summary?.counts).toMatchObject({ eventsPublished: 0, transactions: 0 });
    expect(await outbox()).toHaveLength(5);
  });

  it('a postponement is published once the second reply agrees; a withdrawal a day after the first miss (the register outlives the item); a return as back', async () => {
    const list = sampleList(Date.now());
    standin.setContests(list);
    let offsetMs = 0;
    const { invoke } = localHandler(tables, standin.baseUrl, { now: () => Date.now() + offsetMs });
    await invoke({});
    const start2104 = list.find((c) => c.id === 2104)!.startTimeSeconds as number;
    const start2101 = list.find((c) => c.id === 2101)!.startTimeSeconds as number;
    const moved = list.filter((c) => c.id !== 2101).map((c) => (c.id === 2104 ? { ...c, startTimeSeconds: start2104 + 86_400 } : c));
    standin.setContests(moved);
    expect((await invoke({})).summary?.counts).toMatchObject({ eventsPublished: 0, contestsVanished: 1 });
    expect((await invoke({})).summary?.counts).toMatchObject({ eventsPublished: 1 });
    const rescheduled = (await outbox()).find((e) => e.detailType === 'ContestRescheduled')!;
    expect(rescheduled.detail).toMatchObject({
      contestId: cf(2104),
      contest: cf(2104),
      platform: 'codeforces',
      platformId: '2104',
      previousStartTimeSeconds: start2104,
      startTimeSeconds: start2104 + 86_400,
    });
    // A third miss deletes it: nothing told yet, the reply clock remembers it.
    expect((await invoke({})).summary?.counts).toMatchObject({ contestsRemoved: 1, eventsPublished: 0 });
    const clockItem = async () =>
      (await tables.doc.send(new GetCommand({ TableName: tables.names.contests, Key: { contestId: replyClockId('codeforces') } }))).Item;
    expect((await clockItem())?.withdrawn).toMatchObject({ [cf(2101)]: { start: start2101, told: false } });
    // A day after its first miss (the run's clock moved on), it is told withdrawn, once.
    offsetMs = 25 * 3_600_000;
    // Replies made a day later (the stand-in dates its replies by the real clock: queued bodies instead).
    const dayLater = (contests: typeof list) => ({
      body: {
        status: 'OK',
        result: contests.map((c) => ({
          ...c,
          relativeTimeSeconds: Math.floor((Date.now() + offsetMs) / 1000) - (c.startTimeSeconds as number),
        })),
      },
    });
    standin.enqueue(dayLater(moved), dayLater(moved));
    expect((await invoke({})).summary?.counts).toMatchObject({ eventsPublished: 1 });
    expect((await invoke({})).summary?.counts).toMatchObject({ eventsPublished: 0 });
    expect(kinds(await outbox()).filter((line) => line.startsWith('codeforces:2101 '))).toEqual([
      'codeforces:2101 ContestAnnounced',
      'codeforces:2101 ContestWithdrawn',
    ]);
    // Listed again: back, and the register forgets it.
    standin.enqueue(dayLater(list.map((c) => (c.id === 2104 ? { ...c, startTimeSeconds: start2104 + 86_400 } : c))));
    expect((await invoke({})).summary?.outcome).toBe('succeeded');
    expect(kinds(await outbox()).filter((line) => line.startsWith('codeforces:2101 '))).toEqual([
      'codeforces:2101 ContestAnnounced',
      'codeforces:2101 ContestBack',
      'codeforces:2101 ContestWithdrawn',
    ]);
    expect((await clockItem())?.withdrawn).toBeUndefined();
  });

  it('a run whose commit answer was lost fails; its retry finds the change written and publishes nothing twice', async () => {
    const { invoke, requests } = localHandler(tables, standin.baseUrl);
    let lose = true;
    requests.client.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        const items = (args.input as { TransactItems?: { Put?: { TableName?: string } }[] }).TransactItems ?? [];
        if (lose && items.some((item) => item.Put?.TableName === tables.names.outbox)) {
          lose = false;
          throw Object.assign(new Error('socket hang up after the write was applied'), { name: 'TimeoutError', $metadata: {} });
        }
        return result;
      },
      { step: 'initialize', name: 'loseAnswer' },
    );
    const lost = await invoke({});
    expect(lose).toBe(false);
    expect(lost.summary).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/socket hang up/) });
    // The transaction landed: contests and their events together.
    expect(await outbox()).toHaveLength(5);
    const retry = await invoke({});
    expect(retry.summary).toMatchObject({ outcome: 'succeeded', counts: { eventsPublished: 0, contestsWritten: 0 } });
    expect(await outbox()).toHaveLength(5);
  });

  it('a dry run lists the events it would publish and writes none', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const { summary } = await invoke({ dryRun: true });
    expect(summary?.changes).toMatchObject({
      eventsTotal: 5,
      events: expect.arrayContaining([{ detailType: 'ContestAnnounced', contestId: cf(2101) }]),
    });
    expect(await outbox()).toEqual([]);
  });
});
