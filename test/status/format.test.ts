/** `npm run status`: the pure formatting of the lease item and run records. */
import { describe, expect, it } from 'vitest';
import {
  formatStatus,
  heldLines,
  staleLines,
  leaseState,
  runRows,
  span,
  textTable,
  utc,
  type RunView,
  type StatusView,
} from '../../cli/status/format.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');

const run = (over: Partial<RunView>): RunView => ({
  pk: 'run#2026-11-30T11:00:00Z',
  runId: 'run-b',
  fence: 2,
  source: 'schedule',
  outcome: 'succeeded',
  interval: '2026-11-30T11:00:00Z',
  startedAtMs: NOW - 60_000,
  finishedAtMs: NOW - 59_200,
  counts: { contestsFetched: 59, contestsWritten: 0, contestsUnchanged: 13, contestsRemoved: 0, leaseRetries: 1 },
  ...over,
});

describe('leaseState', () => {
  it('never used, free, lapsed, held', () => {
    expect(leaseState(undefined, NOW)).toEqual({ state: 'never-used' });
    expect(leaseState({ fence: 3, releasedAtMs: NOW - 1000 }, NOW)).toEqual({ state: 'free', releasedAtMs: NOW - 1000 });
    expect(leaseState({ holder: 'r', expiresAtMs: NOW - 1, fence: 3 }, NOW)).toEqual({
      state: 'lapsed',
      holder: 'r',
      expiresAtMs: NOW - 1,
    });
    expect(leaseState({ holder: 'r', expiresAtMs: NOW + 5000, fence: 3 }, NOW)).toEqual({
      state: 'held',
      holder: 'r',
      expiresAtMs: NOW + 5000,
    });
  });
});

describe('small formatters', () => {
  it('utc, span, textTable', () => {
    expect(utc(NOW)).toBe('2026-11-30 12:00:00 UTC');
    expect(utc(undefined)).toBe('–');
    expect([span(11_900), span(600_000), span(3 * 3600_000), span(3 * 86_400_000)]).toEqual(['11 s', '10 min', '3 h', '3 d']);
    expect(textTable(['a', 'bb'], [['xxx', 'y']])).toBe('a    bb\n---  --\nxxx  y');
  });

  it('a run row: outcome with dry run and reason, counts, duration; missing values as dashes', () => {
    const { headers, rows } = runRows([
      run({}),
      run({
        runId: undefined,
        pk: 'run#console#x',
        outcome: 'failed',
        reason: 'codeforces',
        dryRun: true,
        counts: undefined,
        interval: undefined,
        startedAtMs: undefined,
      }),
    ]);
    expect(headers).toEqual([
      'finished (UTC)',
      'source',
      'interval',
      'outcome',
      'fence',
      'fetched',
      'written',
      'unchanged',
      'removed',
      'ms',
      'run id',
    ]);
    expect(rows[0]).toEqual([
      '2026-11-30 11:59:00',
      'schedule',
      '2026-11-30T11:00:00Z',
      'succeeded',
      '2',
      '59',
      '0',
      '13',
      '0',
      '800',
      'run-b',
    ]);
    expect(rows[1]).toEqual([
      '2026-11-30 11:59:00',
      'schedule',
      '–',
      'failed (dry run) codeforces',
      '2',
      '–',
      '–',
      '–',
      '–',
      '–',
      'run#console#x',
    ]);
  });
});

describe('formatStatus', () => {
  const view = (over: Partial<StatusView>): StatusView => ({ source: 'table T', lease: undefined, runs: [], totalRuns: 0, ...over });

  it('a released lease: free, the fence, the last run, the intervals done and the run table', () => {
    const text = formatStatus(
      view({
        lease: {
          fence: 2,
          releasedAtMs: NOW - 59_000,
          ledger: new Set([Date.parse('2026-11-30T10:00:00Z') / 60_000, Date.parse('2026-11-30T11:00:00Z') / 60_000]),
          lastRun: { runId: 'run-b', outcome: 'succeeded', fence: 2, interval: '2026-11-30T11:00:00Z', finishedAtMs: NOW - 59_200 },
        },
        runs: [
          run({}),
          run({ runId: 'run-a', fence: 1, startedAtMs: NOW - 3_601_000, finishedAtMs: NOW - 3_600_000, counts: { contestsWritten: 13 } }),
        ],
        totalRuns: 2,
      }),
      NOW,
    );
    expect(text).toContain('contest-sync status from table T, at 2026-11-30 12:00:00 UTC');
    expect(text).toMatch(/^lease +free \(released 2026-11-30 11:59:01 UTC, 59 s ago\)$/m);
    expect(text).toMatch(/^fence +2$/m);
    expect(text).toMatch(
      /^last run +succeeded, fence 2, interval 2026-11-30T11:00:00Z, finished 2026-11-30 11:59:00 UTC \(59 s ago\), run run-b$/m,
    );
    expect(text).toMatch(/^intervals done +2 remembered, latest 2026-11-30T11:00:00Z$/m);
    expect(text).toContain('Last 2 of 2 run records, newest first:');
    const table = text.split('newest first:\n')[1]!.split('\n\n')[0]!.trimEnd().split('\n');
    expect(table).toHaveLength(4);
    expect(text).toContain('Held changes: none (as of the run finished 2026-11-30 11:59:00 UTC).');
    expect(text.trimEnd().split('\n').at(-1)).toBe('Stale replies: none in the 2 runs shown.');
    expect(table[2]).toMatch(/run-b$/);
    expect(table[3]).toMatch(/^2026-11-30 11:00:00 .* 1 +– +13 +– +– +\d+ +run-a$/);
  });

  it('a held lease says who and until when; a lapsed one says it was never released', () => {
    const held = formatStatus(
      view({
        lease: {
          holder: 'run-x',
          expiresAtMs: NOW + 20_000,
          fence: 7,
          acquiredAtMs: NOW - 10_000,
          source: 'schedule',
          interval: '2026-11-30T12:00:00Z',
        },
      }),
      NOW,
    );
    expect(held).toMatch(/^lease +HELD by run-x$/m);
    expect(held).toMatch(/^until +2026-11-30 12:00:20 UTC \(in 20 s\)$/m);
    expect(held).toMatch(/^since +2026-11-30 11:59:50 UTC \(schedule, interval 2026-11-30T12:00:00Z\)$/m);
    const lapsed = formatStatus(view({ lease: { holder: 'run-x', expiresAtMs: NOW - 120_000, fence: 7 } }), NOW);
    expect(lapsed).toMatch(/^lease +free: lapsed at 2026-11-30 11:58:00 UTC \(2 min ago\); run-x never released it/m);
  });

  it('a table never used; failed runs print their error under the table', () => {
    expect(formatStatus(view({}), NOW)).toMatch(/^lease +free \(no run has taken it yet\)\nfence +0 \(never acquired\)\nlast run +–/m);
    const failed = formatStatus(
      view({ runs: [run({ outcome: 'failed', reason: 'codeforces', error: 'CodeforcesError: 503' })], totalRuns: 1 }),
      NOW,
    );
    expect(failed).toContain('Last 1 of 1 run record, newest first:');
    expect(failed).toContain('  run-b: CodeforcesError: 503');
  });
});

describe('held changes', () => {
  it('lists what the newest successful run held, with since when, and how to accept it', () => {
    const held = [
      { contestId: 2101, kind: 'drop', since: '2026-11-30T10:00:00.000Z', replies: 2 },
      { contestId: 2102, kind: 'start-in-past', since: '2026-11-30T11:00:00.000Z', replies: 1 },
    ];
    const lines = heldLines([run({ outcome: 'failed' }), run({ held, counts: { contestsHeld: 2 } }), run({ runId: 'older' })], NOW);
    expect(lines[0]).toBe('Held changes: 2 (as of the run finished 2026-11-30 11:59:00 UTC):');
    expect(lines[1]).toContain('2101     drop           2026-11-30 10:00:00 UTC (2 h ago)');
    expect(lines[1]).toContain('2102     start-in-past  2026-11-30 11:00:00 UTC (60 min ago)');
    expect(lines[2]).toMatch(/\{"acceptHeld": true\}/);
  });

  it('says none, or unknown when no successful run is shown', () => {
    expect(heldLines([run({})], NOW)).toEqual(['Held changes: none (as of the run finished 2026-11-30 11:59:00 UTC).']);
    expect(heldLines([run({ outcome: 'failed' })], NOW)[0]).toMatch(/unknown/);
  });
});

describe('stale replies', () => {
  it("counts the runs that met a stale reply and names the newest one's times", () => {
    const runs: RunView[] = [
      {
        pk: 'run#b',
        outcome: 'succeeded',
        counts: { repliesStale: 1 },
        stale: { madeAt: '2026-11-30T10:00:02.000Z', newestApplied: '2026-11-30T10:00:02.000Z' },
      },
      { pk: 'run#a', outcome: 'succeeded', counts: { repliesStale: 0 } },
    ];
    expect(staleLines(runs)).toEqual([
      'Stale replies: 1 of the 2 runs shown (never applied); newest made 2026-11-30T10:00:02.000Z, newest applied 2026-11-30T10:00:02.000Z.',
    ]);
    expect(staleLines([runs[1]!])).toEqual(['Stale replies: none in the 1 run shown.']);
  });
});
