import { describe, expect, it } from 'vitest';
import { encodeTokens, slotOf } from '../../src/runtime/ledger.js';
import { acquireCondition, explainRefusal } from '../../src/runtime/record.js';

const NOW = Date.parse('2026-11-29T14:05:00Z');

describe('acquireCondition', () => {
  it('decides expiry by the expiry attribute, and dedupes scheduled intervals', () => {
    expect(acquireCondition(false)).toBe('(attribute_not_exists(holder) OR expiresAtMs <= :now)');
    expect(acquireCondition(true)).toContain('NOT contains(ledger, :slot)');
    expect(acquireCondition(true)).toContain('(doneAtMs < :stale OR NOT contains(#done, :token))');
    expect(acquireCondition({ slot: true, token: false })).not.toContain(':token');
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
    const compact = {
      pk: 'x',
      holder: 'run-b',
      expiresAtMs: NOW + 5000,
      done: encodeTokens([slotOf('2026-11-29T14:00:00Z')]),
      doneAtMs: NOW,
    };
    expect(explainRefusal(compact, NOW, '2026-11-29T14:00:00Z')).toEqual({ reason: 'already-done', interval: '2026-11-29T14:00:00Z' });
    expect(explainRefusal(compact, NOW, '2026-11-29T13:00:00Z')).toMatchObject({ reason: 'lease-held' });
  });

  it('still reports lease-held when the returned item disagrees with the condition (clock skew)', () => {
    expect(explainRefusal({ pk: 'x', holder: 'run-c', expiresAtMs: NOW }, NOW, undefined)).toMatchObject({
      reason: 'lease-held',
      holder: 'run-c',
    });
    expect(explainRefusal(undefined, NOW, undefined)).toMatchObject({ reason: 'lease-held', holder: 'unknown' });
  });
});
