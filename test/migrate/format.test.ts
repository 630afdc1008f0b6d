/** What `npm run migrate` prints (cli/migrate/format.ts). */
import { describe, expect, it } from 'vitest';
import { barrierPassed, pageCopied, rolledBack, started } from '../../lambda/migration/marker.js';
import { formatBack, formatMarker, formatVerify } from '../../cli/migrate/format.js';
import type { TableReport } from '../../lambda/migration/verify.js';

const t0 = Date.parse('2026-12-02T16:00:00Z');
const table = (over: Partial<TableReport> = {}): TableReport => ({
  legacy: 10,
  same: 10,
  differ: 0,
  attributes: {},
  missing: 0,
  refused: 0,
  examples: [],
  ...over,
});

describe('npm run migrate', () => {
  it('status: not started, copying with its rate, done, rolled back', () => {
    expect(formatMarker(undefined, 'stack ContestSync', t0)).toContain('not started');
    const copying = pageCopied(
      barrierPassed(pageCopied(started(t0, undefined, 1), { contests: 300 }, undefined, t0 + 1_000), t0 + 31_000),
      { reminders: 49_000 },
      { contestId: 2120, userId: 'u' },
      t0 + 41_000,
    );
    const text = formatMarker(copying, 'stack ContestSync', t0 + 60_000);
    expect(text).toContain('state     copying — copying the reminders');
    expect(text).toContain('started   2026-12-02 16:00:00 UTC (1 min ago), 1 run');
    expect(text).toContain('copied    300 contests items, 49,000 reminders; 0 already there, 0 refused');
    expect(text).toContain('rate      4,900 reminders a second since the barrier');
    expect(text).toContain('cursor    {"contestId":2120,"userId":"u"}');
    const done = pageCopied(copying, { reminders: 1_000 }, undefined, t0 + 42_000);
    expect(formatMarker(done, 'stack ContestSync', t0 + 60_000)).toContain('done      2026-12-02 16:00:42 UTC');
    expect(formatMarker(rolledBack(done, t0 + 90_000), 'x', t0 + 90_000)).toContain(
      'rolled back: the next run of this release copies again',
    );
  });

  it('verify: ok only when every item has an equal copy; names the changes', () => {
    expect(formatVerify({ contests: table(), reminders: table() })).toMatchObject({ ok: true });
    const { text, ok } = formatVerify({
      contests: table(),
      reminders: table({
        same: 8,
        differ: 1,
        missing: 1,
        attributes: { notifiedStart: 1 },
        examples: [{ key: 'codeforces:2120#03 u', kind: 'differs', attributes: ['notifiedStart'] }],
      }),
    });
    expect(ok).toBe(false);
    expect(text).toContain(
      "reminders: 10 in the previous release's table: 8 copied as they are, 1 changed since, 1 without a copy, 0 refused",
    );
    expect(text).toContain('  changed: notifiedStart 1');
    expect(text).toContain('  differs  codeforces:2120#03 u: notifiedStart');
  });

  it('back: a dry run says what it would do', () => {
    const counts = { written: 3, deleted: 1, other: 0 };
    expect(formatBack({ contests: counts, reminders: counts, deletesOrphans: true }, false)).toContain(
      'a dry run: nothing written (add --apply)',
    );
    expect(formatBack({ contests: counts, reminders: counts, deletesOrphans: false }, true)).toContain(
      'legacy items without a copy are kept',
    );
  });
});
