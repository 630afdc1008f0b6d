/**
 * The dry-run result lists what a sync would change, bounded: no reply, however long, can make the
 * console result approach Lambda's 6 MB response limit.
 */
import { describe, expect, it, vi } from 'vitest';
import { codeforcesReply } from '../../../lambda/sources/codeforces/source.js';
import { CONTEST_LIMITS } from '../../../lambda/sources/codeforces/schema.js';
import type { ContestItem } from '../../../lambda/contests/model.js';
import { createHandler } from '../../../lambda/sources/codeforces/handler.js';
import { DRY_RUN_LISTED } from '../../../lambda/sync/summary.js';
import type { StorePort } from '../../../lambda/sync/sync.js';
import { cf } from '../../support/ids.js';

const NOW_S = Math.floor(Date.now() / 1000);

function deps(fetchedCount: number, stored: ContestItem[]) {
  const open = vi.fn(() => {
    throw new Error('a dry run opens no lease');
  });
  const store: StorePort = {
    scanContests: async () => stored,
    remindersOf: async () => [],
    contestActions: () => [{}],
    reminderAction: () => ({}),
    clockAction: () => ({}),
    retiredRows: async () => [],
    shardMoveAction: () => ({}),
  };
  const contests = Array.from({ length: fetchedCount }, (_, i) => ({
    id: 10_000 + i,
    // The longest name the schema lets through, in 3-byte characters.
    name: '€'.repeat(CONTEST_LIMITS.maxNameLength),
    type: 'CF' as const,
    phase: 'BEFORE' as const,
    frozen: false,
    durationSeconds: 7200,
    startTimeSeconds: NOW_S + 3600 + i,
  }));
  const reply = codeforcesReply({ contests, listedIds: contests.map((c) => c.id), invalid: 0, unscheduled: 0, attempts: 1, latencyMs: 1 });
  const handler = createHandler({
    env: { CONTESTS_TABLE_NAME: 'contests', REMINDERS_TABLE_NAME: 'reminders', COORDINATION_TABLE_NAME: 'coordination' },
    coordination: { open: () => ({ lease: { acquire: open } as never, writer: { commit: open } }) },
    store,
    fetchReply: async () => reply,
    write: () => undefined,
  });
  return { open, run: (event: unknown) => handler(event, { getRemainingTimeInMillis: () => 60_000 }) };
}

describe('dry-run changes', () => {
  it(`lists the first ${DRY_RUN_LISTED} writes and cancellations with their totals, and writes nothing`, async () => {
    const stale = (id: number): ContestItem => ({
      contestId: cf(id),
      platform: 'codeforces',
      platformId: String(id),
      name: `gone ${id}`,
      type: 'CF',
      phase: 'BEFORE',
      startTimeSeconds: NOW_S + 7200,
      durationSeconds: 7200,
      url: `https://codeforces.com/contest/${id}`,
      updatedAt: '2026-01-01T00:00:00.000Z',
      expiresAt: NOW_S + 99_999,
    });
    // 5000 listed contests; 80 stored ones missing for the first time (marked vanished) and 80 missing
    // for the third time (deleted): under half of the 360 stored, so not suspicious.
    const fresh = Array.from({ length: 80 }, (_, i) => stale(1 + i));
    const third = Array.from({ length: 80 }, (_, i) => ({ ...stale(1_000 + i), vanishedAt: NOW_S - 7200, missingSyncs: 2 }));
    // Renamed, same start: a plausible change, written (a mass move earlier would be held).
    const listed = Array.from({ length: 200 }, (_, i) => ({
      ...stale(10_000 + i),
      name: 'old name',
      startTimeSeconds: NOW_S + 3600 + i,
      expiresAt: NOW_S + 3600 + i + 7200 + 7 * 24 * 3600,
    }));
    const d = deps(5_000, [...fresh, ...third, ...listed]);
    const summary = await d.run({ dryRun: true });
    expect(summary).toMatchObject({ outcome: 'succeeded', dryRun: true });
    expect(summary.changes?.write).toHaveLength(DRY_RUN_LISTED);
    expect(summary.changes?.writeTotal).toBe(5_000);
    expect(summary.changes?.cancel).toHaveLength(DRY_RUN_LISTED);
    expect(summary.changes?.cancelTotal).toBe(80);
    expect(summary.changes?.vanish).toHaveLength(DRY_RUN_LISTED);
    expect(summary.changes?.vanishTotal).toBe(80);
    expect(d.open).not.toHaveBeenCalled();
    const bytes = Buffer.byteLength(JSON.stringify(summary));
    console.info(`[dry run] 5000 writes of 512-character names, 80 vanished, 80 deletions: result ${bytes} bytes`);
    expect(bytes).toBeLessThan(100 * 1024);
  });
});
