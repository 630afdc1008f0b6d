/** The gate of the upgrade (lambda/migration/gate.ts): one marker read per container until done. */
import { describe, expect, it } from 'vitest';
import { migrationGate, NO_GATE } from '../../../lambda/migration/gate.js';
import type { MigrationState } from '../../../lambda/migration/marker.js';

describe('the migration gate', () => {
  it('asks the marker while the copy is not done, and never again once it is', async () => {
    const answers: (MigrationState | undefined)[] = [undefined, 'copying', 'rolled-back', 'done', 'copying'];
    let reads = 0;
    const gate = migrationGate(async () => answers[reads++]);
    expect([await gate.done(), await gate.done(), await gate.done()]).toEqual([false, false, false]);
    expect(await gate.done()).toBe(true);
    expect([await gate.done(), await gate.done()]).toEqual([true, true]);
    expect(reads).toBe(4);
  });

  it('a failed read is no answer: the caller fails, and the next call asks again', async () => {
    let calls = 0;
    const gate = migrationGate(async () => {
      calls += 1;
      if (calls === 1) throw new Error('throttled');
      return 'done';
    });
    await expect(gate.done()).rejects.toThrow('throttled');
    expect(await gate.done()).toBe(true);
  });

  it('without legacy tables there is no gate', async () => {
    expect(await NO_GATE.done()).toBe(true);
  });
});
