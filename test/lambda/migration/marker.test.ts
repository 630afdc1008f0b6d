/** The marker's record logic (lambda/migration/marker.ts): what it says and what comes next. */
import { describe, expect, it } from 'vitest';
import { MigrationStateError } from '../../../lambda/migration/errors.js';
import {
  barrierPassed,
  DEFAULT_BARRIER_MS,
  nextStep,
  pageCopied,
  parseMarker,
  resumed,
  rolledBack,
  started,
} from '../../../lambda/migration/marker.js';

const t0 = Date.parse('2026-12-02T16:00:00Z');

describe('the migration marker', () => {
  it('starts without a marker and after a rollback; a done one is final', () => {
    expect(nextStep(undefined, t0)).toEqual({ kind: 'start' });
    expect(nextStep(rolledBack(started(t0), t0 + 1), t0 + 2)).toEqual({ kind: 'start' });
    const done = pageCopied({ ...started(t0), phase: 'reminders' }, { reminders: 3 }, undefined, t0 + 5);
    expect(done).toMatchObject({ state: 'done', phase: 'done', doneAtMs: t0 + 5, counts: { reminders: 3 } });
    expect(nextStep(done, t0 + 10)).toEqual({ kind: 'done' });
  });

  it('copies the contests page by page, then waits for the barrier 30 s past the start, then copies the reminders', () => {
    let marker = started(t0);
    expect(nextStep(marker, t0)).toEqual({ kind: 'copy', table: 'contests' });
    marker = pageCopied(marker, { contests: 98 }, { contestId: 2120 }, t0 + 1);
    expect(nextStep(marker, t0 + 1)).toEqual({ kind: 'copy', table: 'contests', cursor: { contestId: 2120 } });
    marker = pageCopied(marker, { contests: 5, refused: 1 }, undefined, t0 + 2);
    expect(marker).toMatchObject({ phase: 'barrier', counts: { contests: 103, refused: 1 } });
    expect(marker.cursor).toBeUndefined();
    expect(DEFAULT_BARRIER_MS).toBe(30_000);
    expect(nextStep(marker, t0 + 29_999)).toEqual({ kind: 'wait', untilMs: t0 + 30_000 });
    expect(nextStep(marker, t0 + 30_000)).toEqual({ kind: 'barrier' });
    marker = barrierPassed(marker, t0 + 31_000);
    expect(marker).toMatchObject({ phase: 'reminders', barrierAtMs: t0 + 31_000 });
    expect(nextStep(marker, t0 + 31_000)).toEqual({ kind: 'copy', table: 'reminders' });
    marker = pageCopied(marker, { reminders: 90, existing: 8 }, { contestId: 2120, userId: 'u' }, t0 + 32_000);
    expect(resumed(marker, t0 + 40_000)).toMatchObject({ runs: 2, cursor: { contestId: 2120, userId: 'u' } });
  });

  it('parses what it writes and refuses anything else', () => {
    const marker = pageCopied(started(t0), { contests: 1 }, { contestId: 1 }, t0);
    expect(parseMarker({ pk: 'migration#qualified-keys', ...marker })).toEqual(marker);
    expect(parseMarker(undefined)).toBeUndefined();
    expect(() => parseMarker({ ...marker, state: 'finished' })).toThrow(MigrationStateError);
    expect(() => parseMarker({ ...marker, counts: { contests: -1 } })).toThrow(/counts/);
    expect(() => parseMarker({ ...marker, state: 'done' })).toThrow(/done in one field only/);
    expect(parseMarker(rolledBack(pageCopied({ ...marker, phase: 'reminders' }, {}, undefined, t0), t0 + 1))).toMatchObject({
      state: 'rolled-back',
      phase: 'done',
      rolledBackAtMs: t0 + 1,
    });
  });
});
