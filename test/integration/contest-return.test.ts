/**
 * A contest that comes back after its delete, on DynamoDB Local with the template's tables
 * (docs/events.md, "Ids"): a contest missing from three replies is deleted, and the reply clock's
 * register keeps its published start and its event sequence. The run that deletes it stops right
 * after the delete, before its own clock write (a crash, a lost lease, a throttled read): the
 * register must still hold it, so that when the source lists it again at a new time users are
 * told the move under a new event id — never an id the contest already used, which the outbox
 * would drop as a duplicate.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { replyClockId } from '../../lambda/contests/model.js';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
import { apiContest, sampleList, scanAll } from '../support/contests.js';
import { localHandler } from '../support/handler.js';
import { cf } from '../support/ids.js';
import type { TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';

let standin: CodeforcesStandin;
let tables: TestTables;
useWorld('contest-return', (world) => {
  ({ standin, tables } = world);
});

interface Told {
  detailType: string;
  eventId: string;
  detail: Record<string, unknown>;
}

/** The outbox's events of one contest, in the order of their sequence. */
async function toldOf(contestId: string): Promise<Told[]> {
  const items = await scanAll(tables.doc, tables.names.outbox!);
  return items
    .map((item) => ({
      detailType: String(item.detailType),
      eventId: String(item.eventId),
      detail: JSON.parse(String(item.detail)) as Record<string, unknown>,
    }))
    .filter((event) => event.detail.contestId === contestId)
    .sort((a, b) => Number(a.detail.sequence) - Number(b.detail.sequence));
}

type Action = { Put?: { TableName?: string; Item?: Record<string, unknown> }; Delete?: { TableName?: string } };

describe('a contest deleted after its misses and listed again', () => {
  it('is told its move under a new id even when the run that deleted it stopped before its clock', async () => {
    const nowMs = Date.now();
    const list = sampleList(nowMs);
    standin.setContests(list);
    const { invoke, requests } = localHandler(tables, standin.baseUrl);
    // The run that deletes stops after the delete committed and before any later write of the clock.
    let crashAfterDelete = false;
    let deleted = false;
    requests.client.middlewareStack.add(
      (next) => async (args) => {
        const items = (args.input as { TransactItems?: Action[] }).TransactItems ?? [];
        const onContests = (a: Action) => a.Put?.TableName === tables.names.contests || a.Delete?.TableName === tables.names.contests;
        const deletes = items.some((a) => a.Delete?.TableName === tables.names.contests);
        const clock = items.some((a) => onContests(a) && a.Put?.Item?.contestId === replyClockId('codeforces'));
        if (crashAfterDelete && deleted && clock && !deletes) throw Object.assign(new Error('the run stopped here'), { name: 'Crash' });
        const result = await next(args);
        if (crashAfterDelete && deletes) deleted = true;
        return result;
      },
      { step: 'initialize', name: 'crashAfterDelete' },
    );

    expect((await invoke({})).summary?.outcome).toBe('succeeded');
    const first = await toldOf(cf(2101));
    expect(first.map((e) => e.detailType)).toEqual(['ContestAnnounced']);
    const start = list.find((c) => c.id === 2101)!.startTimeSeconds as number;

    standin.setContests(list.filter((c) => c.id !== 2101));
    expect((await invoke({})).summary?.counts).toMatchObject({ contestsVanished: 1 });
    expect((await invoke({})).summary?.outcome).toBe('succeeded');
    crashAfterDelete = true;
    const crashed = await invoke({});
    crashAfterDelete = false;
    expect(deleted).toBe(true);
    expect(crashed.summary?.outcome).toBe('failed');
    const clock = await tables.doc.send(
      new GetCommand({ TableName: tables.names.contests, Key: { contestId: replyClockId('codeforces') }, ConsistentRead: true }),
    );
    // The register holds what the deleted contest published and how many events it was told.
    expect(clock.Item?.withdrawn).toMatchObject({ [cf(2101)]: { start, told: false, seq: 1 } });

    // Listed again a day later than it was announced: a move, its second event, a new id.
    standin.setContests([...list.filter((c) => c.id !== 2101), apiContest(2101, 72 + 24, {}, nowMs)]);
    const back = await invoke({});
    expect(back.summary).toMatchObject({ outcome: 'succeeded', counts: { eventsPublished: 1, eventsDuplicate: 0 } });
    const told = await toldOf(cf(2101));
    expect(told.map((e) => [e.detailType, e.detail.sequence])).toEqual([
      ['ContestAnnounced', 1],
      ['ContestRescheduled', 2],
    ]);
    expect(told[1]!.eventId).not.toBe(told[0]!.eventId);
    expect(told[1]!.detail).toMatchObject({ previousStartTimeSeconds: start, startTimeSeconds: start + 86_400 });
  });

  it('re-created under a new id (same name and start): told withdrawn by the run that sees it, naming the new id', async () => {
    const nowMs = Date.now();
    const list = sampleList(nowMs);
    standin.setContests(list);
    const { invoke } = localHandler(tables, standin.baseUrl);
    expect((await invoke({})).summary?.outcome).toBe('succeeded');
    const old = list.find((c) => c.id === 2103)!;
    standin.setContests([...list.filter((c) => c.id !== 2103), { ...old, id: 2199 }]);
    expect((await invoke({})).summary).toMatchObject({ outcome: 'succeeded', counts: { eventsPublished: 2, contestsVanished: 1 } });
    expect((await toldOf(cf(2103))).map((e) => [e.detailType, e.detail.replacedBy, e.detail.startTimeSeconds])).toEqual([
      ['ContestAnnounced', undefined, old.startTimeSeconds],
      ['ContestWithdrawn', cf(2199), old.startTimeSeconds],
    ]);
    expect((await toldOf(cf(2199))).map((e) => [e.detailType, e.detail.name])).toEqual([['ContestAnnounced', old.name]]);
  });
});
