/** The sync job's side of the upgrade (lambda/migration/job.ts), on tables in memory (./memory.ts). */
import { describe, expect, it } from 'vitest';
import { migrationJob } from '../../../lambda/migration/job.js';
import { world } from './memory.js';

describe('the sync job while the copy is not done', () => {
  it('copies instead of syncing until done, then lets the sync run without asking the marker again', async () => {
    const w = world();
    let reads = 0;
    const store = { ...w.deps.store, readMarker: async () => (reads++, w.deps.store.readMarker()) };
    const job = migrationJob({ ...w.deps, store });
    expect(await job.gate.done()).toBe(false);
    const first = await job.run(w.run('run-1'));
    expect(first).toMatchObject({ state: 'done', copied: { contests: 13, reminders: 38 } });
    const before = reads;
    expect(await job.run(w.run('run-2'))).toBeUndefined();
    expect(await job.gate.done()).toBe(true);
    expect(reads).toBe(before);
  });

  it('a new container finds it done: the sync runs, after one marker read', async () => {
    const w = world();
    await migrationJob(w.deps).run(w.run('run-1'));
    const fresh = migrationJob(w.deps);
    expect(await fresh.run(w.run('run-2'))).toBeUndefined();
  });
});
