import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_EVENT_AGE_MS,
  TOKEN_STALE_AFTER_MS,
  decodeTokens,
  encodeTokens,
  ledgerHolds,
  ledgerRetentionMs,
  ledgerSlots,
  rememberDone,
  slotOf,
  slotToken,
  usesTokens,
  withinRetention,
} from '../../src/runtime/ledger.js';
import { itemSizeBytes } from '../../src/runtime/item-size.js';

const MINUTE = 60_000;
const NOW = Date.parse('2026-11-29T14:05:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** A deterministic pseudo-random sequence (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the ledger retention', () => {
  it('lasts as long as a duplicate or a retry can arrive: twice the event age, one period, the skew; at most 7 days', () => {
    expect(ledgerRetentionMs(60)).toBe((2 * 120 + 60 + 5) * MINUTE); // 5 h 05 min, hourly, events kept 2 h
    expect(ledgerRetentionMs(1)).toBe((2 * 120 + 1 + 5) * MINUTE);
    expect(ledgerRetentionMs(5, 6 * 3600_000)).toBe((2 * 360 + 5 + 5) * MINUTE);
    expect(ledgerRetentionMs(24 * 60, 6 * 3600_000)).toBe((2 * 360 + 24 * 60 + 5) * MINUTE);
    expect(ledgerRetentionMs(7 * 24 * 60)).toBe(7 * 24 * 3600_000); // a weekly job: capped
    expect(DEFAULT_MAX_EVENT_AGE_MS).toBe(2 * 3600_000);
  });

  it('keeps the compact form for every period up to two hours at the default event age, the number set beyond', () => {
    for (const period of [1, 5, 15, 30, 60, 120]) expect(usesTokens(ledgerRetentionMs(period))).toBe(true);
    expect(usesTokens(ledgerRetentionMs(180))).toBe(false);
    expect(usesTokens(ledgerRetentionMs(24 * 60))).toBe(false);
    expect(usesTokens(ledgerRetentionMs(1, 6 * 3600_000))).toBe(false);
  });

  it('tells the window: not older than the retention, not past the skew', () => {
    const retention = ledgerRetentionMs(60);
    expect(withinRetention(iso(NOW - retention), NOW, retention)).toBe(true);
    expect(withinRetention(iso(NOW - retention - MINUTE), NOW, retention)).toBe(false);
    expect(withinRetention(iso(NOW + 5 * MINUTE), NOW, retention)).toBe(true);
    expect(withinRetention(iso(NOW + 6 * MINUTE), NOW, retention)).toBe(false);
  });

  it('adds the interval and forgets slots outside the window', () => {
    const retention = ledgerRetentionMs(60);
    const old = slotOf(iso(NOW - retention - 3_600_000));
    const recent = slotOf(iso(NOW - 3_600_000));
    expect([...rememberDone(new Set([old, recent]), '2026-11-29T14:00:00Z', NOW, retention)].sort()).toEqual(
      [recent, slotOf('2026-11-29T14:00:00Z')].sort(),
    );
    // An interval older than the retention (a console run of it) is not remembered: it would be forgotten at once.
    expect([...rememberDone(new Set([recent]), iso(NOW - retention - 3_600_000), NOW, retention)]).toEqual([recent]);
  });
});

describe('the compact ledger (done)', () => {
  it('names a minute in two characters, a capital first: a token can only match a whole token', () => {
    for (let slot = 29_000_000; slot < 29_000_000 + 2_000; slot += 1) expect(slotToken(slot)).toMatch(/^[A-Z][0-9a-z]$/);
    const done = encodeTokens([29_000_000, 29_000_001, 29_000_060]);
    expect(done).toHaveLength(6);
    // Every two-character window that is not a token start is a digit then a capital: never a token.
    for (let i = 1; i < done.length; i += 2) expect(done.slice(i, i + 2)).not.toMatch(/^[A-Z][0-9a-z]$/);
  });

  it('decodes what it encoded, relative to when it was written', () => {
    const retention = ledgerRetentionMs(1);
    const writtenAt = NOW;
    const slots = new Set<number>();
    for (let minute = -Math.floor(retention / MINUTE); minute <= 5; minute += 7) slots.add(Math.floor(writtenAt / MINUTE) + minute);
    expect(decodeTokens(encodeTokens(slots), writtenAt)).toEqual(slots);
    expect(ledgerSlots({ done: encodeTokens(slots), doneAtMs: writtenAt, ledger: new Set([1, 2]) })).toEqual(new Set([...slots, 1, 2]));
  });

  it('refuses exactly the intervals done, whenever a contender asks within its window, however old the ledger', () => {
    // A job writes its ledger at `writtenAt`; contenders come at any later time (a pause, an outage).
    const next = random(7);
    const wrong: string[] = [];
    for (const period of [1, 5, 60, 120]) {
      const retentionMinutes = Math.floor(ledgerRetentionMs(period) / MINUTE);
      for (let trial = 0; trial < 4; trial += 1) {
        const writtenAt = NOW + Math.floor(next() * 10_000) * MINUTE;
        const base = Math.floor(writtenAt / MINUTE);
        const done = new Set<number>();
        for (let m = base - retentionMinutes; m <= base + 5; m += 1) if (m % period === 0 && next() < 0.5) done.add(m);
        const item = { done: encodeTokens(done), doneAtMs: writtenAt };
        for (let later = 0; later <= 2_000; later += 1 + Math.floor(next() * 40)) {
          const now = writtenAt + later * MINUTE;
          const nowMinute = Math.floor(now / MINUTE);
          for (let x = nowMinute - retentionMinutes; x <= nowMinute + 5; x += 1) {
            if (x % period !== 0 || ledgerHolds(item, iso(x * MINUTE), now) === done.has(x)) continue;
            wrong.push(`period ${period}, written ${later} min before, slot ${x}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('disregards a ledger written longer ago than the stale window (its tokens repeat after 936 minutes)', () => {
    const slot = Math.floor(NOW / MINUTE);
    const item = { done: slotToken(slot), doneAtMs: NOW };
    const later = NOW + 936 * MINUTE; // the same token names this minute again
    expect(slotToken(slot + 936)).toBe(slotToken(slot));
    expect(ledgerHolds(item, iso(later), later)).toBe(false);
    expect(ledgerHolds(item, iso(NOW), NOW + TOKEN_STALE_AFTER_MS - MINUTE)).toBe(true);
    expect(ledgerHolds(item, iso(NOW), NOW + TOKEN_STALE_AFTER_MS + MINUTE)).toBe(false); // the ledger is stale now
  });

  it('reads the number set of the earlier release exactly', () => {
    const slot = slotOf('2026-11-29T14:00:00Z');
    expect(ledgerHolds({ ledger: new Set([slot]) }, '2026-11-29T14:00:00Z', NOW)).toBe(true);
    expect(ledgerHolds({ ledger: new Set([slot]) }, '2026-11-29T13:00:00Z', NOW)).toBe(false);
  });
});

describe('the lease item', () => {
  const lastRun = {
    runId: '8b0e6b7c-0f5e-4c55-9a53-4f1f1b3f2a11',
    outcome: 'succeeded',
    fence: 123_456,
    interval: '2026-11-29T23:59:00Z',
    finishedAtMs: NOW,
  };
  const item = (ledger: Record<string, unknown>) => ({
    pk: 'lease#reminder-delivery#0',
    holder: '8b0e6b7c-0f5e-4c55-9a53-4f1f1b3f2a11',
    expiresAtMs: NOW,
    fence: 123_456,
    acquiredAtMs: NOW,
    renewedAtMs: NOW,
    releasedAtMs: NOW,
    source: 'schedule',
    interval: '2026-11-29T23:59:00Z',
    lastRun,
    ttl: 1_900_000_000,
    ...ledger,
  });

  function fullLedger(periodMinutes: number, retention: number): Set<number> {
    let ledger = new Set<number>();
    const start = Date.parse('2026-11-29T00:00:00Z');
    for (let at = start; at < start + 24 * 3600_000; at += periodMinutes * MINUTE) ledger = rememberDone(ledger, iso(at), at, retention);
    return ledger;
  }

  it('stays under 1 KB (one write unit) with a full ledger, at a one-minute rate and hourly', () => {
    const minute = fullLedger(1, ledgerRetentionMs(1));
    expect(minute.size).toBe(247);
    expect(itemSizeBytes(item({ done: encodeTokens(minute), doneAtMs: NOW }))).toBeLessThan(1024);
    const hourly = fullLedger(60, ledgerRetentionMs(60));
    expect(hourly.size).toBe(6);
    expect(itemSizeBytes(item({ done: encodeTokens(hourly), doneAtMs: NOW }))).toBeLessThan(512);
  });

  it('was 2 KB and more with the number set of 200 periods (at least 6 hours, at most 7 days)', () => {
    const slots = (count: number, step: number) => new Set(Array.from({ length: count }, (_, i) => 29_500_000 + i * step));
    expect(itemSizeBytes(item({ ledger: slots(168, 60) }))).toBeGreaterThan(1024);
    expect(itemSizeBytes(item({ ledger: slots(361, 1) }))).toBeGreaterThan(2048);
  });
});

describe('itemSizeBytes', () => {
  it("counts as DynamoDB's guide does: names, UTF-8 strings, numbers by significant digits, sets, maps and lists", () => {
    expect(itemSizeBytes({ pk: 'abc' })).toBe(5);
    expect(itemSizeBytes({ n: 123_456 })).toBe(1 + 4);
    expect(itemSizeBytes({ n: 1_000_000 })).toBe(1 + 2); // trailing zeros trimmed
    expect(itemSizeBytes({ s: 'é' })).toBe(1 + 2);
    expect(itemSizeBytes({ b: true, z: null })).toBe(4);
    expect(itemSizeBytes({ ns: new Set([12, 34]) })).toBe(2 + 2 + 2);
    expect(itemSizeBytes({ m: { a: 'x' } })).toBe(1 + 3 + (1 + 1 + 1));
    expect(itemSizeBytes({ l: ['x', 1] })).toBe(1 + 3 + (1 + 1) + (2 + 1));
  });
});
