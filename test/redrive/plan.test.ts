/** What `npm run redrive` may resend (cli/redrive/plan.ts): the windows, the rule, bounds. Pure. */
import { describe, expect, it } from 'vitest';
import { reminderDueId } from '../../lambda/delivery/due.js';
import { formatRedrive } from '../../cli/redrive/format.js';
import {
  RedriveUsageError,
  parseWindow,
  planRedrive,
  readOutboxItem,
  summarize,
  verdictOf,
  type OutboxRecord,
} from '../../cli/redrive/plan.js';

const NOW_MS = Date.parse('2026-12-10T12:00:00Z');
const NOW = NOW_MS / 1000;
const HOUR = 3600;
const DAY = 86_400;
const START = NOW + 2 * HOUR;

/** A detail's contest as the redrive reads it: a number (an event of the release before qualified ids) is Codeforces'. */
const qualified = (id: unknown): string => (typeof id === 'number' ? `codeforces:${id}` : String(id));

function outboxItem(overrides: { detailType?: string; detail?: Record<string, unknown>; eventId?: string; ageSeconds?: number } = {}) {
  const detailType = overrides.detailType ?? 'ReminderDue';
  const detail = overrides.detail ?? {
    contestId: 'codeforces:2051',
    userId: 'ana',
    minutesBefore: 30,
    startTimeSeconds: START,
    dueAt: START - 1800,
  };
  const eventId =
    overrides.eventId ??
    (detailType === 'ReminderDue'
      ? reminderDueId(qualified(detail.contestId), String(detail.userId), 'intent-1', Number(detail.startTimeSeconds))
      : 'contest:abc');
  const source = detailType === 'ReminderDue' ? 'contest-sync.reminders' : 'contest-sync.contests';
  return {
    pk: `${source}#${eventId}`,
    eventId,
    source,
    detailType,
    detail: JSON.stringify({ eventId, ...detail }),
    createdAtMs: NOW_MS - 1000 * (overrides.ageSeconds ?? HOUR),
    runId: 'run-1',
    fence: 3,
    ttl: NOW + 6 * DAY,
  };
}
const record = (item: Record<string, unknown>): OutboxRecord => {
  const read = readOutboxItem(item);
  if (read === undefined) throw new Error('not an outbox item');
  return read;
};
/** The contest and the row as they are when the reminder was sent and nothing changed since. */
const agreeing = {
  contest: { contestId: 'codeforces:2051', dueStart: START },
  reminder: { contestId: 'codeforces:2051', userId: 'ana', intent: 'intent-1', notifiedStart: START },
};

describe('verdictOf', () => {
  it('resends a ReminderDue whose start is ahead, whose contest still fires at that start, whose row still says it was sent for this intent and start', () => {
    expect(verdictOf(record(outboxItem()), NOW_MS, agreeing)).toEqual({ resend: true });
  });

  it('resends a contest event within the window, whatever its content (consumers dedupe it)', () => {
    expect(verdictOf(record(outboxItem({ detailType: 'ContestRescheduled', detail: { contestId: 2051 } })), NOW_MS)).toEqual({
      resend: true,
    });
  });

  it('refuses anything committed longer ago than the dedupe window allows (6 days), and takes up to it', () => {
    const old = record(outboxItem({ ageSeconds: 6 * DAY + 1 }));
    expect(verdictOf(old, NOW_MS, agreeing)).toMatchObject({ resend: false, reason: 'older-than-dedupe-window' });
    const contestEvent = record(outboxItem({ detailType: 'ContestAnnounced', detail: { contestId: 1 }, ageSeconds: 6.5 * DAY }));
    expect(verdictOf(contestEvent, NOW_MS)).toMatchObject({ resend: false, reason: 'older-than-dedupe-window' });
    expect(verdictOf(record(outboxItem({ ageSeconds: 6 * DAY })), NOW_MS, agreeing)).toEqual({ resend: true });
  });

  it('never resends a ReminderDue whose start has passed ("starts in 30 minutes" after it started)', () => {
    const passed = record(outboxItem({ detail: { contestId: 2051, userId: 'ana', minutesBefore: 30, startTimeSeconds: NOW - 60 } }));
    expect(verdictOf(passed, NOW_MS, agreeing)).toMatchObject({ resend: false, reason: 'start-passed' });
    const now = record(outboxItem({ detail: { contestId: 2051, userId: 'ana', minutesBefore: 30, startTimeSeconds: NOW } }));
    expect(verdictOf(now, NOW_MS, agreeing)).toMatchObject({ resend: false, reason: 'start-passed' });
  });

  it('follows the rule: refused when the contest is gone, paused or moved since', () => {
    const item = record(outboxItem());
    expect(verdictOf(item, NOW_MS, { reminder: agreeing.reminder })).toMatchObject({ resend: false, reason: 'contest-gone' });
    expect(verdictOf(item, NOW_MS, { ...agreeing, contest: { contestId: 'codeforces:2051' } })).toMatchObject({
      resend: false,
      reason: 'contest-paused',
    });
    expect(verdictOf(item, NOW_MS, { ...agreeing, contest: { contestId: 'codeforces:2051', dueStart: START + 2 * HOUR } })).toMatchObject({
      resend: false,
      reason: 'contest-moved',
    });
  });

  it('refused when the reminder was cancelled, set again (another intent) or sent for another start since', () => {
    const item = record(outboxItem());
    expect(verdictOf(item, NOW_MS, { contest: agreeing.contest })).toMatchObject({ resend: false, reason: 'reminder-changed' });
    expect(verdictOf(item, NOW_MS, { ...agreeing, reminder: { ...agreeing.reminder, intent: 'intent-2' } })).toMatchObject({
      resend: false,
      reason: 'reminder-changed',
      why: expect.stringMatching(/another intent/),
    });
    expect(verdictOf(item, NOW_MS, { ...agreeing, reminder: { ...agreeing.reminder, notifiedStart: START - DAY } })).toMatchObject({
      resend: false,
      reason: 'reminder-changed',
    });
  });

  it('takes an event of the release before qualified ids (contestId a number) as the Codeforces contest it named, under the same id', () => {
    const detail = { contestId: 2051, userId: 'ana', minutesBefore: 30, startTimeSeconds: START, dueAt: START - 1800 };
    const item = record(outboxItem({ detail }));
    expect(item.eventId).toBe(reminderDueId('codeforces:2051', 'ana', 'intent-1', START));
    expect(verdictOf(item, NOW_MS, agreeing)).toEqual({ resend: true });
    // The same id under another platform's contest names another reminder: not this row's.
    const other = record(outboxItem({ detail: { ...detail, contestId: 'atcoder:2051' }, eventId: item.eventId }));
    expect(verdictOf(other, NOW_MS, agreeing)).toMatchObject({
      resend: false,
      reason: 'reminder-changed',
    });
  });

  it('takes a row written before intents by the id it was sent under', () => {
    const legacyId = reminderDueId('codeforces:2051', 'ana', undefined, START);
    const item = record(outboxItem({ eventId: legacyId }));
    const { intent: _intent, ...legacyRow } = agreeing.reminder;
    expect(verdictOf(item, NOW_MS, { ...agreeing, reminder: legacyRow })).toEqual({ resend: true });
    expect(verdictOf(item, NOW_MS, agreeing)).toMatchObject({ resend: false, reason: 'reminder-changed' });
  });
});

describe('readOutboxItem and planRedrive', () => {
  it('refuses what is not an outbox item as the jobs write it: a key that does not match, a missing field, oversized texts', () => {
    const good = outboxItem();
    for (const bad of [
      { ...good, pk: 'other#key' },
      { ...good, createdAtMs: 'yesterday' },
      { ...good, detail: undefined },
      { ...good, eventId: 'e'.repeat(257), pk: `${good.source}#${'e'.repeat(257)}` },
      { ...good, detail: 'x'.repeat(256 * 1024 + 1) },
    ])
      expect(readOutboxItem(bad)).toBeUndefined();
    const plan = planRedrive([{ ...good, pk: 'other#key' }, outboxItem({ detail: { contestId: 'x' } })], NOW_MS, () => agreeing);
    expect(plan.map((entry) => entry.verdict)).toMatchObject([
      { resend: false, reason: 'malformed' },
      { resend: false, reason: 'malformed' },
    ]);
  });

  it('lists every item oldest first with its verdict, and sums them by reason', () => {
    const items = [
      outboxItem({ ageSeconds: HOUR }),
      outboxItem({ detailType: 'ContestAnnounced', detail: { contestId: 7 }, eventId: 'contest:old', ageSeconds: 7 * DAY }),
      outboxItem({ detail: { contestId: 2051, userId: 'bo', minutesBefore: 30, startTimeSeconds: NOW - 10 }, ageSeconds: 2 * HOUR }),
    ];
    const plan = planRedrive(items, NOW_MS, () => agreeing);
    expect(plan.map((entry) => [entry.eventId, entry.verdict.resend ? 'resend' : entry.verdict.reason])).toEqual([
      ['contest:old', 'older-than-dedupe-window'],
      [items[2]!.eventId, 'start-passed'],
      [items[0]!.eventId, 'resend'],
    ]);
    expect(summarize(plan)).toEqual({ resend: 1, refused: 2, reasons: { 'older-than-dedupe-window': 1, 'start-passed': 1 } });
    const text = formatRedrive(plan, new Map(), false, { fromMs: NOW_MS - 8 * DAY * 1000, toMs: NOW_MS });
    expect(text).toMatch(/^refuse {2}.*contest:old {2}older-than-dedupe-window: committed 7\.0 days ago/m);
    expect(text).toMatch(/^resend {2}.*\(dry run\)$/m);
    expect(text).toMatch(/Would resend: 1\. Dry run: nothing was written; add --apply to resend them\./);
  });

  it('prints what came from outside bounded and without control characters', () => {
    const item = { ...outboxItem(), pk: `x\u001b[31m${'y'.repeat(500)}` };
    const text = formatRedrive(
      planRedrive([item], NOW_MS, () => agreeing),
      new Map(),
      false,
      { fromMs: 0, toMs: NOW_MS },
    );
    expect(text).not.toContain('\u001b');
    expect(Math.max(...text.split('\n').map((line) => line.length))).toBeLessThan(600);
  });
});

describe('parseWindow', () => {
  it('reads ISO times, --to defaulting to now; refuses what is not a window', () => {
    expect(parseWindow('2026-12-10T10:00:00Z', undefined, NOW_MS)).toEqual({ fromMs: Date.parse('2026-12-10T10:00:00Z'), toMs: NOW_MS });
    expect(() => parseWindow(undefined, undefined, NOW_MS)).toThrow(RedriveUsageError);
    expect(() => parseWindow('yesterday', undefined, NOW_MS)).toThrow(/--from "?yesterday"? is not an ISO time/);
    expect(() => parseWindow('2026-12-10T11:00:00Z', '2026-12-10T10:00:00Z', NOW_MS)).toThrow(/--from must be before --to/);
  });
});
