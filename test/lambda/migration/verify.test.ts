/** The copy checked item by item (lambda/migration/verify.ts), read-only, on tables in memory (./memory.ts). */
import { describe, expect, it } from 'vitest';
import { migrate } from '../../../lambda/migration/migrate.js';
import { verifyCopy } from '../../../lambda/migration/verify.js';
import { keyOf, TABLES, world } from './memory.js';

describe('verify', () => {
  it('finds every copy the same right after the migration, and names what changed since', async () => {
    const w = world();
    const verify = () => verifyCopy({ store: w.deps.store, tables: TABLES, dueShards: 4 });
    expect((await verify()).reminders).toMatchObject({ legacy: 38, same: 0, missing: 38 });
    await migrate(w.run('run-1'), w.deps);
    const commits = w.commits.length;
    const right = await verify();
    expect(right.contests).toEqual({ legacy: 13, same: 13, differ: 0, attributes: {}, missing: 0, refused: 0, examples: [] });
    expect(right.reminders).toMatchObject({ legacy: 38, same: 38, differ: 0, missing: 0 });
    // This release sends one reminder and a user cancels another.
    const [sent, cancelled] = w.items(TABLES.reminders).filter((row) => row.dueAt !== undefined);
    const { dueAt: _dueAt, dueShard: _dueShard, ...rest } = sent!;
    w.tables.get(TABLES.reminders)!.set(keyOf(TABLES.reminders, sent!), { ...rest, paused: 'notified', notifiedStart: sent!.dueStart });
    w.tables.get(TABLES.reminders)!.delete(keyOf(TABLES.reminders, cancelled!));
    const later = await verify();
    expect(later.reminders).toMatchObject({
      legacy: 38,
      same: 36,
      differ: 1,
      missing: 1,
      attributes: { dueAt: 1, dueShard: 1, notifiedStart: 1, paused: 1 },
    });
    expect(later.reminders.examples).toEqual(
      expect.arrayContaining([
        {
          key: `${String(sent!.contestKey)} ${String(sent!.userId)}`,
          kind: 'differs',
          attributes: ['dueAt', 'dueShard', 'notifiedStart', 'paused'],
        },
        { key: `${String(cancelled!.contestKey)} ${String(cancelled!.userId)}`, kind: 'missing' },
      ]),
    );
    expect(w.commits).toHaveLength(commits); // read-only
  });
});
