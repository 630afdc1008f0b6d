import { describe, expect, it } from 'vitest';
import {
  DONE_INTERVAL_RETENTION_MS,
  acquireCondition,
  explainRefusal,
  rememberDone,
} from '../../../lambda/lease/record.js';

const NOW = Date.parse('2026-11-29T14:05:00Z');

describe('acquireCondition', () => {
  it('decides expiry by the expiry attribute, and dedupes scheduled intervals', () => {
    expect(acquireCondition(false)).toBe('(attribute_not_exists(holder) OR expiresAtMs <= :now)');
    expect(acquireCondition(true)).toContain('NOT contains(doneIntervals, :interval)');
    expect(acquireCondition(true)).not.toContain('ttl');
  });
});

describe('explainRefusal', () => {
  it('names the holder and its expiry when the lease is held', () => {
    expect(explainRefusal({ pk: 'x', holder: 'run-a', expiresAtMs: NOW + 1, fence: 7 }, NOW, undefined)).toEqual({
      reason: 'lease-held',
      holder: 'run-a',
      expiresAtMs: NOW + 1,
      fence: 7,
    });
  });

  it('prefers already-done when the interval succeeded, whoever holds the lease', () => {
    const old = { pk: 'x', holder: 'run-b', expiresAtMs: NOW + 5000, doneIntervals: new Set(['2026-11-29T14:00:00Z']) };
    expect(explainRefusal(old, NOW, '2026-11-29T14:00:00Z')).toEqual({ reason: 'already-done', interval: '2026-11-29T14:00:00Z' });
    expect(explainRefusal(old, NOW, '2026-11-29T15:00:00Z')).toMatchObject({ reason: 'lease-held', holder: 'run-b' });
  });

  it('still reports lease-held when the returned item disagrees with the condition (clock skew)', () => {
    expect(explainRefusal({ pk: 'x', holder: 'run-c', expiresAtMs: NOW }, NOW, undefined)).toMatchObject({
      reason: 'lease-held',
      holder: 'run-c',
    });
    expect(explainRefusal(undefined, NOW, undefined)).toMatchObject({ reason: 'lease-held', holder: 'unknown' });
  });
});

describe('rememberDone', () => {
  it('adds the interval and forgets intervals older than the retention', () => {
    const old = new Date(NOW - DONE_INTERVAL_RETENTION_MS - 3_600_000).toISOString();
    const recent = new Date(NOW - 3_600_000).toISOString();
    const done = rememberDone(new Set([old, recent, 'garbage']), '2026-11-29T14:00:00Z', NOW);
    expect([...done].sort()).toEqual([recent, '2026-11-29T14:00:00Z'].sort());
  });
});
