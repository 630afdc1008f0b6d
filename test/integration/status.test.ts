/**
 * `npm run status` against DynamoDB Local: two syncs, then the status read and formatted; and the
 * persisted database of `npm start -- --persist` surviving a restart of DynamoDB Local, so that
 * the second sync writes nothing and the status shows fence 2 and both run records.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../lambda/sync/handler.js';

import { localDynamoClient, startDynamoDbLocal } from '../../local/dynamodb-local.js';
import { createTablesFromTemplate, localTableNames } from '../../local/tables.js';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
import { formatStatus } from '../../cli/status/format.js';
import { readStatus } from '../../cli/status/read.js';
import { localHandler } from '../support/handler.js';
import { synthesizedTemplate, type TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';

let standin: CodeforcesStandin;
let tables: TestTables;

useWorld('status', (world) => {
  ({ standin, tables } = world);
});

describe('status of the Coordination table', () => {
  it('after two syncs: lease free, fence 2, both run records newest first, the second writing nothing', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    expect((await invoke({})).summary).toMatchObject({ outcome: 'succeeded', fence: 1, counts: { contestsWritten: 7 } });
    expect((await invoke({})).summary).toMatchObject({ outcome: 'succeeded', fence: 2, counts: { contestsWritten: 0 } });

    const client = localDynamoClient(tables.endpoint);
    const view = await readStatus(client, tables.names.coordination, 'test', 5);
    client.destroy();
    expect(view.lease).toMatchObject({ fence: 2 });
    expect(view.lease?.holder).toBeUndefined();
    expect(view.runs.map((r) => r.fence)).toEqual([2, 1]);

    const text = formatStatus(view, Date.now());
    console.info(text);
    expect(text).toMatch(/^lease +free \(released /m);
    expect(text).toMatch(/^fence +2$/m);
    expect(text).toMatch(/^last run +succeeded, fence 2,/m);
    const rows = text.split('newest first:\n')[1]!.split('\n\n')[0]!.trimEnd().split('\n').slice(2);
    expect(text).toMatch(/^Held changes: none \(as of the run finished /m);
    expect(rows).toHaveLength(2);
    // columns: finished date, time, source, interval, outcome, fence, fetched, written, ...
    expect(rows.map((row) => row.split(/\s+/).slice(2, 8))).toEqual([
      ['console', '–', 'succeeded', '2', '8', '0'],
      ['console', '–', 'succeeded', '1', '8', '7'],
    ]);
  });
});

describe('a persisted DynamoDB Local (npm start -- --persist)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'contest-sync-persist-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** One `npm start -- --persist`: start DynamoDB Local on `dir`, keep or create the tables, sync once. */
  async function persistedRun() {
    const local = await startDynamoDbLocal({ path: dir });
    try {
      const client = local.client();
      const names = await createTablesFromTemplate(client, synthesizedTemplate(), 'local', { existing: 'keep' });
      expect(names).toEqual(localTableNames('local', true, true)); // the stack's three tables, its outbox and the door's table
      const handler = createHandler({
        env: {
          CONTESTS_TABLE_NAME: names.contests,
          REMINDERS_TABLE_NAME: names.reminders,
          COORDINATION_TABLE_NAME: names.coordination,
          CODEFORCES_API_URL: standin.baseUrl,
          LEASE_DURATION_SECONDS: '30',
        },
        dynamo: client,
        write: () => undefined,
      });
      const summary = await handler({}, { getRemainingTimeInMillis: () => 30_000 });
      const text = formatStatus(await readStatus(client, names.coordination, 'persisted', 5), Date.now());
      client.destroy();
      return { summary, text };
    } finally {
      await local.stop();
    }
  }

  it('keeps the tables and data across restarts: the second run writes 0 and the status shows both runs', async () => {
    const first = await persistedRun();
    expect(first.summary).toMatchObject({ outcome: 'succeeded', fence: 1, counts: { contestsWritten: 7 } });
    const second = await persistedRun();
    expect(second.summary).toMatchObject({ outcome: 'succeeded', fence: 2, counts: { contestsWritten: 0, contestsUnchanged: 7 } });
    expect(second.text).toMatch(/^fence +2$/m);
    expect(second.text).toContain('Last 2 of 2 run records, newest first:');
  }, 120_000);
});
