/**
 * What operators see: exactly one summary log line per invocation and its EMF metrics, for a run
 * that succeeded, one skipped for each reason and one failed in each phase. Real DynamoDB Local,
 * real stand-in; the failures are provoked for real (unreachable DynamoDB, missing table,
 * takeover of the lease mid-run).
 */
import { describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { localDynamoClient, freePort } from '../../lib/local/dynamodb-local.js';
import type { CodeforcesStandin } from '../../lib/local/codeforces-standin.js';
import { snapshot } from '../support/contests.js';
import { localHandler, type Invoked } from '../support/handler.js';
import { scheduledEvent } from '../support/processes.js';
import type { TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';

let standin: CodeforcesStandin;
let tables: TestTables;

useWorld('obs', (world) => {
  ({ standin, tables } = world);
});

const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');

function summaryLines(invoked: Invoked) {
  return invoked.lines.filter((line) => line.summary === true);
}

/** EMF documents: the one with the run's metrics (dimension `service`) and any per-phase ones. */
function emf(invoked: Invoked) {
  return invoked.lines.filter((line) => line._aws !== undefined) as (Record<string, unknown> & {
    _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
  })[];
}

function runMetrics(invoked: Invoked) {
  const docs = emf(invoked).filter((doc) => JSON.stringify(doc._aws.CloudWatchMetrics[0]?.Dimensions) === '[["service"]]');
  expect(docs).toHaveLength(1);
  const doc = docs[0]!;
  const directive = doc._aws.CloudWatchMetrics[0]!;
  expect(directive.Namespace).toBe('ContestSync');
  expect(doc.service).toBe('contest-sync');
  const values = Object.fromEntries(directive.Metrics.map((m) => [m.Name, doc[m.Name]]));
  const units = Object.fromEntries(directive.Metrics.map((m) => [m.Name, m.Unit]));
  return { values, units };
}

function expectOneSummary(invoked: Invoked, expected: Record<string, unknown>) {
  const lines = summaryLines(invoked);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ service: 'contest-sync', ...expected });
  expect(typeof lines[0]?.runId).toBe('string');
  // every line of the invocation carries the run id
  for (const line of invoked.lines.filter((l) => l.level !== undefined)) expect(line.runId).toBe(lines[0]?.runId);
  // Shown in the test output: what an operator reads in CloudWatch for this kind of run.
  const { function_arn, function_memory_size, function_name, function_request_id, sampling_rate, cold_start, ...shown } = lines[0]!;
  console.info(`[summary line] ${JSON.stringify(shown)}`);
  return lines[0]!;
}

describe('a succeeded run', () => {
  it('logs `ran` once, with source, interval and fence, and publishes its counts', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const invoked = await invoke(scheduledEvent(hourAgo()));
    const line = expectOneSummary(invoked, { level: 'INFO', message: 'ran', outcome: 'succeeded', source: 'schedule', fence: 1 });
    expect(line.interval).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00Z$/);
    const { values, units } = runMetrics(invoked);
    expect(values).toMatchObject({
      RunSucceeded: 1,
      RunFailed: 0,
      RunSkipped: 0,
      LeaseLost: 0,
      ContestsFetched: 8,
      ContestsWritten: 7,
      ContestsUnchanged: 0,
      ContestsRemoved: 0,
      RemindersMoved: 0,
      RemindersDeleted: 0,
      CodeforcesAttempts: 1,
      Heartbeats: 0,
    });
    expect(values.Duration).toBeGreaterThan(0);
    expect(units).toMatchObject({ Duration: 'Milliseconds', CodeforcesLatency: 'Milliseconds', RunSucceeded: 'Count' });
  });
});

describe('the invocation source', () => {
  it('tells the deploy-time trigger (a published version) from the console ($LATEST)', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const arn = 'arn:aws:lambda:us-east-1:000000000000:function:ContestSync-test';
    const deploy = await invoke({}, 60_000, { invokedFunctionArn: `${arn}:7` });
    expect(summaryLines(deploy)[0]).toMatchObject({ message: 'ran', source: 'deploy' });
    expect(deploy.summary?.source).toBe('deploy');
    const consoleRun = await invoke({}, 60_000, { invokedFunctionArn: arn });
    expect(summaryLines(consoleRun)[0]).toMatchObject({ message: 'ran', source: 'console' });
  });
});

describe('skipped runs', () => {
  it('lease-held: names the holder and its expiry; counts SkippedLeaseHeld', async () => {
    const expiresAtMs = Date.now() + 60_000;
    await tables.doc.send(
      new PutCommand({
        TableName: tables.names.coordination,
        Item: { pk: 'lease#contest-sync', holder: 'run-elsewhere', expiresAtMs, fence: 41 },
      }),
    );
    const { invoke } = localHandler(tables, standin.baseUrl);
    const invoked = await invoke({});
    expectOneSummary(invoked, {
      level: 'INFO',
      message: 'skipped',
      outcome: 'skipped',
      reason: 'lease-held',
      holder: 'run-elsewhere',
      holderExpiresAt: new Date(expiresAtMs).toISOString(),
    });
    expect(runMetrics(invoked).values).toEqual({ RunSucceeded: 0, RunFailed: 0, RunSkipped: 1, SkippedLeaseHeld: 1, Duration: expect.any(Number) });
  });

  it('already-done: counts SkippedAlreadyDone', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const event = scheduledEvent(hourAgo());
    await invoke(event);
    const invoked = await invoke(event);
    expectOneSummary(invoked, { message: 'skipped', reason: 'already-done' });
    expect(runMetrics(invoked).values).toMatchObject({ RunSkipped: 1, SkippedAlreadyDone: 1 });
  });
});

describe('failed runs, one per phase', () => {
  function expectFailedMetrics(invoked: Invoked, phase: string) {
    const { values } = runMetrics(invoked);
    expect(values).toMatchObject({ RunFailed: 1, RunSucceeded: 0 });
    const byPhase = emf(invoked).filter((doc) => JSON.stringify(doc._aws.CloudWatchMetrics[0]?.Dimensions) === '[["service","phase"]]');
    if (phase === 'event') return;
    expect(byPhase).toHaveLength(1);
    expect(byPhase[0]).toMatchObject({ phase, RunFailed: 1 });
  }

  it('event: a bad event', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const invoked = await invoke(['not', 'an', 'event']);
    expectOneSummary(invoked, { level: 'ERROR', message: 'failed', phase: 'event', error: expect.stringMatching(/got an array/) });
    expect(runMetrics(invoked).values).toEqual({ EventRejected: 1, RunFailed: 1 });
  });

  it('lease: DynamoDB cannot be reached to take the lease', async () => {
    const port = await freePort();
    const unreachable = { ...tables, endpoint: `http://127.0.0.1:${port}` };
    const { invoke } = localHandler(unreachable, standin.baseUrl);
    const invoked = await invoke({});
    expectOneSummary(invoked, { message: 'failed', phase: 'lease', error: expect.stringMatching(/could not acquire the lease/) });
    expectFailedMetrics(invoked, 'lease');
    expect(standin.requests).toHaveLength(0);
    localDynamoClient(unreachable.endpoint).destroy();
  });

  it('codeforces: the API says FAILED', async () => {
    standin.enqueue({ status: 400, body: { status: 'FAILED', comment: 'contest.list: Internal error' } });
    const { invoke } = localHandler(tables, standin.baseUrl);
    const invoked = await invoke({});
    expectOneSummary(invoked, { message: 'failed', phase: 'codeforces', error: expect.stringMatching(/Internal error/) });
    expectFailedMetrics(invoked, 'codeforces');
  });

  it('store: a DynamoDB data table is missing', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl, { env: { CONTESTS_TABLE_NAME: 'no-such-table' } });
    const invoked = await invoke({});
    expectOneSummary(invoked, { message: 'failed', phase: 'store', error: expect.stringMatching(/ResourceNotFound|non-existent table/) });
    expectFailedMetrics(invoked, 'store');
  });

  it('lease-lost: another run takes the lease over mid-sync; nothing is written', async () => {
    const release = standin.hold();
    const { invoke } = localHandler(tables, standin.baseUrl, { leaseSeconds: 2 });
    const running = invoke({});
    // wait for the acquisition, then take the lease over as a later run would
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (standin.requests.length > 0) break;
    }
    await tables.doc.send(
      new PutCommand({
        TableName: tables.names.coordination,
        Item: { pk: 'lease#contest-sync', holder: 'run-usurper', expiresAtMs: Date.now() + 60_000, fence: 2 },
      }),
    );
    setTimeout(release, 1_500);
    const invoked = await running;
    expectOneSummary(invoked, { message: 'failed', phase: 'lease-lost', fence: 1 });
    expectFailedMetrics(invoked, 'lease-lost');
    expect(runMetrics(invoked).values).toMatchObject({ LeaseLost: 1 });
    expect((await snapshot(tables)).contests).toEqual([]);
  });
});
