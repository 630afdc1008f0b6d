import { describe, expect, it } from 'vitest';
import { marshall } from '@aws-sdk/util-dynamodb';
import { acquireCondition, explainRefusal, ledgerRetentionMs, rememberDone, slotOf } from '../../src/runtime/record.js';

const NOW = Date.parse('2026-11-29T14:05:00Z');

describe('acquireCondition', () => {
  it('decides expiry by the expiry attribute, and dedupes scheduled intervals', () => {
    expect(acquireCondition(false)).toBe('(attribute_not_exists(holder) OR expiresAtMs <= :now)');
    expect(acquireCondition(true)).toContain('NOT contains(ledger, :slot)');
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
    const old = { pk: 'x', holder: 'run-b', expiresAtMs: NOW + 5000, ledger: new Set([slotOf('2026-11-29T14:00:00Z')]) };
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

describe('the interval ledger', () => {
  it('remembers 200 periods, at least 6 hours (every retry arrives within it) and at most 7 days', () => {
    expect(ledgerRetentionMs(1)).toBe(6 * 3_600_000);
    expect(ledgerRetentionMs(60)).toBe(7 * 24 * 3_600_000);
    expect(ledgerRetentionMs(15)).toBe(200 * 15 * 60_000);
  });

  it('adds the interval and forgets slots older than the retention', () => {
    const retention = ledgerRetentionMs(60);
    const old = slotOf(new Date(NOW - retention - 3_600_000).toISOString());
    const recent = slotOf(new Date(NOW - 3_600_000).toISOString());
    const done = rememberDone(new Set([old, recent]), '2026-11-29T14:00:00Z', NOW, retention);
    expect([...done].sort()).toEqual([recent, slotOf('2026-11-29T14:00:00Z')].sort());
  });

  it('stays a few KB at a one-minute rate: the lease item with a full ledger is under 4 KB', () => {
    let ledger = new Set<number>();
    const start = Date.parse('2026-11-29T00:00:00Z');
    for (let minute = 0; minute < 24 * 60; minute += 1) {
      const at = start + minute * 60_000;
      ledger = rememberDone(ledger, new Date(at).toISOString(), at, ledgerRetentionMs(1));
    }
    expect(ledger.size).toBe(361);
    const item = {
      pk: 'lease#some-job',
      holder: '8b0e6b7c-0f5e-4c55-9a53-4f1f1b3f2a11',
      expiresAtMs: NOW,
      fence: 123_456,
      acquiredAtMs: NOW,
      renewedAtMs: NOW,
      releasedAtMs: NOW,
      source: 'schedule',
      interval: '2026-11-29T23:59:00Z',
      ledger,
      lastRun: {
        runId: '8b0e6b7c-0f5e-4c55-9a53-4f1f1b3f2a11',
        outcome: 'succeeded',
        fence: 123_456,
        interval: '2026-11-29T23:59:00Z',
        finishedAtMs: NOW,
      },
      ttl: 1_900_000_000,
    };
    // DynamoDB item size: attribute names plus values (numbers ~ 1 byte per 2 digits + 1).
    const bytes = Buffer.byteLength(JSON.stringify(marshall(item)));
    expect(bytes).toBeLessThan(8 * 1024); // the JSON form overstates the stored size...
    const numbers = [...ledger].reduce((sum, slot) => sum + Math.ceil(String(slot).length / 2) + 1, 0);
    expect(numbers).toBeLessThan(2 * 1024); // ...the ledger itself stores in ~1.8 KB
  });
});
