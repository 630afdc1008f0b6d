/**
 * The write path's pure decisions (lambda/reminders/decide.ts): a set writes nothing when the
 * intent is already stored, writes a whole new row (new intent, per-start bookkeeping gone) when it
 * changes, conditioned on the row and the contest as read, and is refused with a typed error when
 * the contest is missing, vanished or started. And what a caller is shown of a row.
 */
import { describe, expect, it } from 'vitest';
import { contestStateOf, decideSet, expired, rowConditionOf, viewOf, type SetContext } from '../../../lambda/reminders/decide.js';
import { ContestNotFoundError, ContestStartedError, type ReminderError } from '../../../lambda/reminders/errors.js';
import { bucketOf, contestKeyOf } from '../../../lambda/reminders/table.js';

const CF2051 = 'codeforces:2051';
const KEY = contestKeyOf(CF2051, 'alice');

const START = 1_900_000_000;
const NOW = START - 86_400;
const contest = (overrides: Record<string, unknown> = {}) => ({
  contestId: CF2051,
  platform: 'codeforces',
  name: 'Round 2051',
  phase: 'BEFORE',
  startTimeSeconds: START,
  durationSeconds: 7200,
  expiresAt: START + 7200 + 7 * 86_400,
  dueStart: START,
  ...overrides,
});
const context = (overrides: Partial<SetContext> = {}): SetContext => ({
  input: { contestId: CF2051, userId: 'alice', minutesBefore: 30 },
  contest: contest(),
  row: undefined,
  nowSeconds: NOW,
  intent: 'new-intent',
  dueShards: 1,
  ...overrides,
});
/** A row as the write path wrote it for `minutesBefore`, then as delivery left it once sent. */
const storedRow = (minutesBefore: number, overrides: Record<string, unknown> = {}) => ({
  contestId: CF2051,
  userId: 'alice',
  minutesBefore,
  intent: 'old-intent',
  remindAt: START - 60 * minutesBefore,
  expiresAt: START + 7200 + 7 * 86_400,
  dueAt: START - 60 * minutesBefore,
  dueStart: START,
  dueShard: 0,
  ...overrides,
});
const sentRow = (minutesBefore: number) =>
  storedRow(minutesBefore, {
    dueAt: undefined,
    dueStart: undefined,
    dueShard: undefined,
    paused: 'notified',
    notifiedAt: START - 60 * minutesBefore + 5,
    notifiedStart: START,
    sentStarts: new Set([START - 3600]),
  });
const write = (decision: ReturnType<typeof decideSet>) => {
  if (decision.kind !== 'write') throw new Error(`expected a write, got ${decision.kind}`);
  return decision;
};

describe('decideSet', () => {
  it('a new reminder on a contest whose reminders may fire: due at dueStart − lead, on its shard, with the new intent', () => {
    const decision = write(decideSet(context({ dueShards: 4, input: { contestId: CF2051, userId: 'alice', minutesBefore: 30 } })));
    expect(decision.row).toEqual({
      contestKey: KEY,
      contestId: CF2051,
      userId: 'alice',
      minutesBefore: 30,
      intent: 'new-intent',
      remindAt: START - 1800,
      expiresAt: START + 7200 + 7 * 86_400,
      dueAt: START - 1800,
      dueStart: START,
      dueShard: bucketOf('alice') % 4,
    });
    expect(decision.rowCondition).toEqual({ kind: 'absent' });
    expect(decision.contest).toEqual({
      contestId: CF2051,
      startTimeSeconds: START,
      expiresAt: START + 7200 + 7 * 86_400,
      phase: 'BEFORE',
      dueStart: START,
    });
    expect(decision.view).toEqual({
      contestId: CF2051,
      minutesBefore: 30,
      remindAt: START - 1800,
      state: 'scheduled',
    });
  });

  it('a contest of another platform whose id collides as a number is its own: its own key, checked by its own id', () => {
    const input = { contestId: 'atcoder:2051', userId: 'alice', minutesBefore: 30 };
    const atcoder = write(decideSet(context({ input, contest: contest({ contestId: 'atcoder:2051', platform: 'atcoder' }) })));
    expect(atcoder.row).toMatchObject({ contestKey: contestKeyOf('atcoder:2051', 'alice'), contestId: 'atcoder:2051' });
    expect(atcoder.row.contestKey).not.toBe(KEY);
    expect(atcoder.contest.contestId).toBe('atcoder:2051');
    // The Codeforces contest of the same number is no answer to it.
    expect(decideSet(context({ input }))).toMatchObject({ kind: 'refused' });
  });

  it('dueAt follows the contest’s dueStart, remindAt its shown start (they differ while a move awaits confirmation)', () => {
    const decision = write(decideSet(context({ contest: contest({ dueStart: START + 3600, remindersPaused: 'unconfirmed' }) })));
    expect(decision.row).toMatchObject({ remindAt: START - 1800, dueAt: START + 3600 - 1800, dueStart: START + 3600 });
    expect(decision.row.paused).toBeUndefined();
    expect(decision.contest).toMatchObject({ dueStart: START + 3600, remindersPaused: 'unconfirmed' });
  });

  it('a contest whose reminders may not fire (no dueStart): the row without dueAt, paused as the contest says', () => {
    const decision = write(decideSet(context({ contest: contest({ dueStart: undefined, remindersPaused: 'held' }) })));
    expect(decision.row).toEqual({
      contestKey: KEY,
      contestId: CF2051,
      userId: 'alice',
      minutesBefore: 30,
      intent: 'new-intent',
      remindAt: START - 1800,
      expiresAt: START + 7200 + 7 * 86_400,
      paused: 'held',
    });
    expect(decision.view.state).toBe('paused');
    // An item the sync wrote before dueStart existed: not due, no reason to copy.
    const legacy = write(decideSet(context({ contest: contest({ dueStart: undefined }) })));
    expect(Object.keys(legacy.row).sort()).toEqual([
      'contestId',
      'contestKey',
      'expiresAt',
      'intent',
      'minutesBefore',
      'remindAt',
      'userId',
    ]);
    expect(legacy.view.state).toBe('paused');
  });

  it('the same lead time again changes nothing (a retried or duplicated set), even once the reminder was sent', () => {
    for (const row of [storedRow(30), sentRow(30)]) {
      const decision = decideSet(context({ row }));
      expect(decision).toEqual({ kind: 'unchanged', view: viewOf(row), ours: false });
    }
    // Whatever its contest does now: the intent is stored, nothing to refuse.
    expect(decideSet(context({ row: storedRow(30), contest: undefined })).kind).toBe('unchanged');
    expect(decideSet(context({ row: storedRow(30), nowSeconds: START + 60 })).kind).toBe('unchanged');
  });

  it('an unchanged row stamped by this very call (an earlier attempt landed) is reported as its own', () => {
    expect(decideSet(context({ row: storedRow(30, { intent: 'new-intent' }) }))).toMatchObject({ kind: 'unchanged', ours: true });
  });

  it('a new lead time is a new intent: the whole row rewritten, re-timed, the sent bookkeeping gone, conditioned on the intent read', () => {
    const decision = write(decideSet(context({ row: sentRow(60) })));
    expect(decision.row).toEqual({
      contestKey: KEY,
      contestId: CF2051,
      userId: 'alice',
      minutesBefore: 30,
      intent: 'new-intent',
      remindAt: START - 1800,
      expiresAt: START + 7200 + 7 * 86_400,
      dueAt: START - 1800,
      dueStart: START,
      dueShard: 0,
    });
    for (const gone of ['notifiedAt', 'notifiedStart', 'sentStarts', 'paused']) expect(decision.row).not.toHaveProperty(gone);
    expect(decision.rowCondition).toEqual({ kind: 'intent', intent: 'old-intent' });
    expect(decision.view.state).toBe('scheduled');
  });

  it('a row written before intents existed is an intent: the same lead time is a no-op, a new one stamps an intent', () => {
    const legacy = storedRow(30, { intent: undefined });
    expect(decideSet(context({ row: legacy })).kind).toBe('unchanged');
    const changed = write(decideSet(context({ row: legacy, input: { contestId: CF2051, userId: 'alice', minutesBefore: 45 } })));
    expect(changed.row.intent).toBe('new-intent');
    expect(changed.rowCondition).toEqual({ kind: 'legacy', minutesBefore: 30 });
  });

  it('a row past its TTL (not yet deleted) is no reminder: a set goes by its contest', () => {
    const stale = storedRow(30, { expiresAt: NOW - 1 });
    expect(decideSet(context({ row: stale, contest: undefined }))).toMatchObject({ kind: 'refused' });
    const decision = write(decideSet(context({ row: stale })));
    expect(decision.rowCondition).toEqual({ kind: 'intent', intent: 'old-intent' });
  });

  it('a row that cannot be shown (written by hand without a usable time) is replaced, conditioned on it as read', () => {
    const broken = { contestId: CF2051, userId: 'alice', minutesBefore: 30 };
    const decision = write(decideSet(context({ row: broken })));
    expect(decision.rowCondition).toEqual({ kind: 'legacy', minutesBefore: 30 });
  });

  it('refuses a contest that is not stored, not of the platform its id names, or vanished: contest-not-found', () => {
    const refusals = [
      undefined,
      { contestId: 'clock#codeforces', replyMadeAt: NOW }, // the reply clock: not a contest the app shows
      contest({ platform: 'atcoder' }),
      contest({ contestId: 2051 }),
      contest({ vanishedAt: NOW - 60, dueStart: undefined, remindersPaused: 'vanished' }),
      contest({ startTimeSeconds: 'soon' }),
      contest({ contestId: 'codeforces:2052' }),
      contest({ contestId: 'atcoder:2051', platform: 'atcoder' }),
    ].map((item) => decideSet(context({ contest: item })));
    for (const decision of refusals) {
      expect(decision.kind).toBe('refused');
      const error = (decision as { error: ReminderError }).error;
      expect(error).toBeInstanceOf(ContestNotFoundError);
      expect(error.code).toBe('contest-not-found');
      expect(error.message).toBe('contest codeforces:2051 not found');
    }
  });

  it('refuses a contest that started (now at or past its start, or its phase past BEFORE): contest-started, also for a change', () => {
    const cases = [
      context({ nowSeconds: START }),
      context({ nowSeconds: START + 1 }),
      context({ contest: contest({ phase: 'CODING' }) }),
      context({ contest: contest({ phase: 'FINISHED', dueStart: undefined, remindersPaused: 'finished' }) }),
      context({ nowSeconds: START + 60, row: storedRow(60) }),
    ];
    for (const ctx of cases) {
      const decision = decideSet(ctx);
      expect(decision.kind).toBe('refused');
      const error = (decision as { error: ReminderError }).error;
      expect(error).toBeInstanceOf(ContestStartedError);
      expect(error.code).toBe('contest-started');
      expect(error.message).toContain('codeforces:2051 has already started');
    }
    // One second before the start it is still set (due at once: the lead is already past).
    expect(write(decideSet(context({ nowSeconds: START - 1 }))).row.dueAt).toBe(START - 1800);
  });
});

describe('viewOf', () => {
  it('shows scheduled, paused and sent rows without internal attributes', () => {
    expect(viewOf(storedRow(30))).toEqual({
      contestId: CF2051,
      minutesBefore: 30,
      remindAt: START - 1800,
      state: 'scheduled',
    });
    expect(viewOf(storedRow(30, { dueAt: undefined, paused: 'held' }))?.state).toBe('paused');
    expect(viewOf(sentRow(30))).toEqual({
      contestId: CF2051,
      minutesBefore: 30,
      remindAt: START - 1800,
      state: 'sent',
      sentStart: START,
    });
    // Sent, then its contest moved: due again for the new start.
    expect(viewOf({ ...sentRow(30), dueAt: START + 1800, paused: undefined })?.state).toBe('scheduled');
    // Sent, then its contest was held: paused, not sent.
    expect(viewOf({ ...sentRow(30), paused: 'held' })?.state).toBe('paused');
    // Sent before notifiedStart existed: for the start its remindAt was for.
    expect(viewOf(storedRow(30, { dueAt: undefined, notifiedAt: START - 1700 }))).toMatchObject({ state: 'sent', sentStart: START });
    for (const view of [viewOf(storedRow(30)), viewOf(sentRow(30))]) {
      expect(Object.keys(view!).some((key) => ['intent', 'dueAt', 'dueShard', 'dueStart', 'userId', 'paused'].includes(key))).toBe(false);
    }
  });

  it('shows nothing of a row without a usable lead time or time', () => {
    expect(viewOf({ contestId: CF2051, userId: 'alice', minutesBefore: '30', remindAt: START })).toBeUndefined();
    expect(viewOf({ contestId: CF2051, userId: 'alice', minutesBefore: 30 })).toBeUndefined();
  });
});

describe('helpers', () => {
  it('contestStateOf keeps what the transaction checks, rowConditionOf the row as read, expired the TTL', () => {
    expect(contestStateOf(contest({ remindersPaused: 'held', dueStart: undefined, vanishedAt: NOW }))).toEqual({
      contestId: CF2051,
      startTimeSeconds: START,
      expiresAt: START + 7200 + 7 * 86_400,
      phase: 'BEFORE',
      remindersPaused: 'held',
      vanishedAt: NOW,
    });
    expect(rowConditionOf(undefined)).toEqual({ kind: 'absent' });
    expect(rowConditionOf(storedRow(30))).toEqual({ kind: 'intent', intent: 'old-intent' });
    expect(expired(storedRow(30, { expiresAt: NOW }), NOW)).toBe(true);
    expect(expired(storedRow(30, { expiresAt: NOW + 1 }), NOW)).toBe(false);
    expect(expired({ contestId: 'codeforces:1' }, NOW)).toBe(false);
  });
});
