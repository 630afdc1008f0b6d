/** The previous release's data moved forward in time for the upgrade test (test/support/upgrade-fixture.ts). */
import { describe, expect, it } from 'vitest';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { loadUpgradeFixture, shiftedFixture, documentItems } from '../../support/upgrade-fixture.js';

const fixture = loadUpgradeFixture();

describe('the fixture, shifted', () => {
  it('moves every time by the same whole minutes and keeps every other value', () => {
    const toMs = fixture.capturedAtMs + 90 * 86_400_000 + 61_234;
    const moved = shiftedFixture(fixture, toMs);
    const s = moved.shiftSeconds;
    expect(s).toBe(90 * 86_400 + 60);
    const before = documentItems(fixture, 'reminders');
    const after = documentItems(moved, 'reminders');
    after.forEach((row, i) => {
      const was = before[i]!;
      expect(row.userId).toBe(was.userId);
      expect(row.intent).toBe(was.intent);
      expect(row.minutesBefore).toBe(was.minutesBefore);
      for (const name of ['remindAt', 'dueAt', 'dueStart', 'notifiedAt', 'notifiedStart', 'expiresAt'])
        expect(row[name]).toBe(was[name] === undefined ? undefined : (was[name] as number) + s);
      if (was.sentStarts !== undefined)
        expect([...(row.sentStarts as Set<number>)]).toEqual([...(was.sentStarts as Set<number>)].map((v) => v + s));
    });
    const clock = documentItems(moved, 'contests').find((c) => c.contestId === 0)!;
    const was = documentItems(fixture, 'contests').find((c) => c.contestId === 0)!;
    expect(clock.replyMadeAt).toBe((was.replyMadeAt as number) + s);
    expect(Date.parse(clock.updatedAt as string)).toBe(Date.parse(was.updatedAt as string) + s * 1000);
    const lease = documentItems(moved, 'coordination').find((i) => i.pk === 'lease#contest-sync')!;
    const leaseWas = documentItems(fixture, 'coordination').find((i) => i.pk === 'lease#contest-sync')!;
    expect(lease.expiresAtMs).toBe((leaseWas.expiresAtMs as number) + s * 1000);
    expect(lease.fence).toBe(leaseWas.fence);
    const detail = JSON.parse(unmarshall(moved.raw.outbox[0]!).detail as string);
    const detailWas = JSON.parse(unmarshall(fixture.raw.outbox[0]!).detail as string);
    expect(detail.startTimeSeconds).toBe(detailWas.startTimeSeconds + s);
    expect(detail.eventId).toBe(detailWas.eventId);
    expect(detail.contestId).toBe(detailWas.contestId);
  });
});
