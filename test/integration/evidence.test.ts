/**
 * A reply is evidence (docs/design.md): the defects of issue #13 reproduced end to end — the real
 * handler, DynamoDB Local tables from the synthesized template, the Codeforces stand-in. Before the
 * model, the first test lost every reminder, the second failed every sync, the third deleted a
 * contest Codeforces kept listing.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
import { addReminder, apiContest, sampleList, snapshot, type ApiContest } from '../support/contests.js';
import { localHandler } from '../support/handler.js';
import type { TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';

let standin: CodeforcesStandin;
let tables: TestTables;

useWorld('evidence', (world) => {
  ({ standin, tables } = world);
});

const UPCOMING = [2101, 2102, 2103, 2104, 2105];
const appView = (contests: Record<string, unknown>[]) =>
  contests.map(({ contestId, phase, startTimeSeconds, vanishedAt }) => ({ contestId, phase, startTimeSeconds, vanishedAt }));

describe('a reply is evidence, not truth', () => {
  it('1. a reply listing upcoming contests FINISHED with starts moved hours back holds them: no reminder deleted, fired ones not cleared', async () => {
    const list = sampleList();
    standin.setContests(list);
    const { invoke } = localHandler(tables, standin.baseUrl);
    await invoke({});
    for (const id of UPCOMING) await addReminder(tables, id, 'alice', 60, list.find((c) => c.id === id)!.startTimeSeconds!);
    // One has already fired (the app's notifier set notifiedAt).
    await tables.doc.send(
      new UpdateCommand({
        TableName: tables.names.reminders,
        Key: { contestId: 2105, userId: 'alice' },
        UpdateExpression: 'SET notifiedAt = :t',
        ExpressionAttributeValues: { ':t': Math.floor(Date.now() / 1000) },
      }),
    );
    const before = await snapshot(tables);

    const nowS = Math.floor(Date.now() / 1000);
    standin.setContests(list.map((c) => (UPCOMING.includes(c.id) ? { ...c, phase: 'FINISHED', startTimeSeconds: nowS - 5 * 3600 } : c)));
    const glitch = await invoke({});
    expect(glitch.summary).toMatchObject({ outcome: 'succeeded', counts: { contestsHeld: 5, remindersDeleted: 0, remindersMoved: 0 } });
    expect(glitch.summary?.held?.map((h) => [h.contestId, h.kind, h.replies])).toEqual(UPCOMING.map((id) => [id, 'start-in-past', 1]));
    const during = await snapshot(tables);
    expect(during.reminders).toEqual(before.reminders);
    expect(appView(during.contests)).toEqual(appView(before.contests));
    // Named in the summary line too.
    const line = glitch.lines.find((l) => l.summary === true);
    expect(line).toMatchObject({ counts: { contestsHeld: 5 }, held: expect.any(Array) });

    standin.setContests(list);
    const honest = await invoke({});
    expect(honest.summary).toMatchObject({ outcome: 'succeeded', counts: { contestsHeld: 0, remindersDeleted: 0, remindersMoved: 0 } });
    const after = await snapshot(tables);
    expect(after.reminders).toEqual(before.reminders);
    expect(after.contests.every((c) => c.pending === undefined || (c.pending as { held: boolean }).held === false)).toBe(true);
  });

  it('2. Codeforces withdraws 4 of 6 rounds: every sync succeeds, a new round lands at once, the withdrawal on the third reply; an operator can accept at once', async () => {
    const list = sampleList();
    standin.setContests(list);
    const { invoke } = localHandler(tables, standin.baseUrl);
    await invoke({});
    const withdrawn = [2101, 2102, 2103, 2104];
    for (const id of withdrawn) await addReminder(tables, id, 'bob', 15, list.find((c) => c.id === id)!.startTimeSeconds!);
    const announced = apiContest(2110, 96);
    standin.setContests([...list.filter((c) => !withdrawn.includes(c.id)), announced]);

    const first = await invoke({});
    expect(first.summary).toMatchObject({ outcome: 'succeeded', counts: { contestsHeld: 4, contestsVanished: 0, contestsWritten: 1 } });
    let state = await snapshot(tables);
    expect(state.contests.find((c) => c.contestId === 2110)).toBeDefined();
    // Held: the app still shows them as upcoming.
    expect(state.contests.filter((c) => withdrawn.includes(c.contestId as number) && c.vanishedAt === undefined)).toHaveLength(4);

    const second = await invoke({});
    expect(second.summary?.held?.map((h) => h.replies)).toEqual([2, 2, 2, 2]);
    const third = await invoke({});
    expect(third.summary).toMatchObject({ outcome: 'succeeded', counts: { contestsHeld: 0, contestsAccepted: 4, contestsRemoved: 4, remindersDeleted: 4 } });
    state = await snapshot(tables);
    expect(state.contests.map((c) => c.contestId)).toEqual([2099, 2100, 2105, 2110]);
    expect(state.reminders).toEqual([]);
  });

  it('2. an operator accepts held change at once with {"acceptHeld": true}, named in the result and the run record', async () => {
    const list = sampleList();
    standin.setContests(list);
    const { invoke } = localHandler(tables, standin.baseUrl);
    await invoke({});
    const withdrawn = [2101, 2102, 2103, 2104];
    standin.setContests(list.filter((c) => !withdrawn.includes(c.id)));
    expect((await invoke({})).summary?.counts.contestsHeld).toBe(4);
    const accepted = await invoke({ acceptHeld: true });
    expect(accepted.summary).toMatchObject({ outcome: 'succeeded', counts: { contestsAccepted: 4, contestsVanished: 4 } });
    expect(accepted.summary?.accepted?.map((h) => [h.contestId, h.kind]).sort()).toEqual(withdrawn.map((id) => [id, 'drop']));
    const record = await tables.doc.send(
      new GetCommand({ TableName: tables.names.coordination, Key: { pk: `run#console#${accepted.summary!.runId}` }, ConsistentRead: true }),
    );
    expect(record.Item).toMatchObject({ accepted: accepted.summary!.accepted, counts: { contestsAccepted: 4 } });
  });

  it('3. miss / invalid / miss / invalid / miss: a contest Codeforces keeps listing is never deleted', async () => {
    // Long-finished contests, as real replies have thousands: one invalid entry stays under the
    // client's share of invalid entries that fails a whole reply.
    const history = Array.from({ length: 20 }, (_, i) => apiContest(1000 + i, -24 * 60 - i));
    const list = [...sampleList(), ...history];
    standin.setContests(list);
    const { invoke } = localHandler(tables, standin.baseUrl);
    await invoke({});
    const start = list.find((c) => c.id === 2103)!.startTimeSeconds!;
    await addReminder(tables, 2103, 'carol', 30, start);
    const invalid: ApiContest = { ...list.find((c) => c.id === 2103)!, name: '' };
    for (let i = 0; i < 5; i += 1) {
      const listed = i % 2 === 0 ? list.filter((c) => c.id !== 2103) : [...list.filter((c) => c.id !== 2103), invalid];
      standin.setContests(listed);
      const { summary } = await invoke({});
      expect(summary?.error).toBeUndefined();
      expect(summary).toMatchObject({ outcome: 'succeeded', counts: { contestsRemoved: 0 } });
    }
    const { contests, reminders } = await snapshot(tables);
    expect(contests.find((c) => c.contestId === 2103)).toMatchObject({ missingSyncs: 1 });
    expect(reminders.map((r) => [r.contestId, r.userId])).toEqual([[2103, 'carol']]);
  });
});
