/**
 * The shared set-up of tests that run syncs: one Codeforces stand-in per file (reset before each
 * test to the sample list, no delay, no queued replies, no recorded requests) and fresh tables
 * from the synthesized template for each test.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startCodeforcesStandin, type CodeforcesStandin } from '../../local/codeforces-standin.js';
import { sampleList } from './contests.js';
import { createTestTables, type TestTables } from './tables.js';

export interface World {
  standin: CodeforcesStandin;
  tables: TestTables;
}

/** Registers the hooks; `onEach` receives the fresh world before each test. */
export function useWorld(label: string, onEach: (world: World) => void): void {
  let standin: CodeforcesStandin | undefined;
  beforeAll(async () => {
    standin = await startCodeforcesStandin();
  });
  afterAll(async () => {
    await standin?.close();
  });
  beforeEach(async () => {
    if (standin === undefined) throw new Error('stand-in not started');
    standin.setContests(sampleList());
    standin.setDelay(0);
    standin.clearQueue();
    standin.requests.length = 0;
    onEach({ standin, tables: await createTestTables(label) });
  });
}
