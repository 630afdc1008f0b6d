/**
 * What operators see: exactly one summary log line per invocation and its EMF metrics, for a run
 * that succeeded, one skipped for each reason and one failed in each phase. Real DynamoDB Local,
 * real stand-in; the failures are provoked for real (unreachable DynamoDB, missing table,
 * takeover of the lease mid-run).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { METRIC, METRIC_SERIES_BUDGET } from '../../lambda/contract.js';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { localDynamoClient, freePort } from '../../local/dynamodb-local.js';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
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

type EmfDocument = Record<string, unknown> & {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
};

/** EMF documents of an invocation. */
function emf(invoked: Invoked): EmfDocument[] {
  return invoked.lines.filter((line) => line._aws !== undefined) as EmfDocument[];
}

/**
 * Every CloudWatch metric series the EMF output of this file's invocations creates: namespace,
 * metric name, and each dimension set with its values. CloudWatch bills each series per month.
 */
const seriesSeen = new Set<string>();
function collectSeries(invoked: Invoked): void {
  for (const doc of emf(invoked)) {
    for (const directive of doc._aws.CloudWatchMetrics) {
      for (const dimensions of directive.Dimensions) {
        const dims = dimensions.map((name) => `${name}=${String(doc[name])}`).join(',');
        for (const metric of directive.Metrics) seriesSeen.add(`${directive.Namespace}/${metric.Name}{${dims}}`);
      }
    }
  }
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
  collectSeries(invoked);
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
  it('logs `ran` once, with source, interval, fence and every count; publishes only the five run metrics', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const invoked = await invoke(scheduledEvent(hourAgo()));
    const line = expectOneSummary(invoked, { level: 'INFO', message: 'ran', outcome: 'succeeded', source: 'schedule', fence: 1 });
    expect(line.interval).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00Z$/);
    // The counts travel whole in the summary line (any count added to RunCounts shows up here).
    expect(line.counts).toEqual(invoked.summary?.counts);
    expect(line.counts).toMatchObject({
      contestsFetched: 8,
      contestsWritten: 7,
      contestsUnchanged: 0,
      contestsRemoved: 0,
      remindersMoved: 0,
      remindersDue: 0,
      remindersPaused: 0,
      repliesStale: 0,
      sourceAttempts: 1,
      heartbeats: 0,
    });
    const { values, units } = runMetrics(invoked);
    expect(values).toEqual({ RunSucceeded: 1, RunFailed: 0, RunSkipped: 0, LeaseLost: 0, Duration: expect.any(Number) });
    expect(values.Duration).toBeGreaterThan(0);
    expect(units).toEqual({ Duration: 'Milliseconds', RunSucceeded: 'Count', RunFailed: 'Count', RunSkipped: 'Count', LeaseLost: 'Count' });
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
  it('lease-held: names the holder and its expiry; counts RunSkipped', async () => {
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
    expect(runMetrics(invoked).values).toEqual({
      RunSucceeded: 0,
      RunFailed: 0,
      RunSkipped: 1,
      LeaseLost: 0,
      Duration: expect.any(Number),
    });
  });

  it('already-done: counts RunSkipped; the reason is in the summary line', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const event = scheduledEvent(hourAgo());
    await invoke(event);
    const invoked = await invoke(event);
    expectOneSummary(invoked, { message: 'skipped', reason: 'already-done' });
    expect(runMetrics(invoked).values).toMatchObject({ RunSkipped: 1, RunSucceeded: 0 });
  });
});

describe('failed runs, one per phase', () => {
  /** RunFailed 1 in the one EMF document; the phase is only in the summary line (no per-phase series). */
  function expectFailedMetrics(invoked: Invoked, phase: string) {
    const { values } = runMetrics(invoked);
    expect(values).toMatchObject({ RunFailed: 1, RunSucceeded: 0, LeaseLost: phase === 'lease-lost' ? 1 : 0 });
    expect(emf(invoked)).toHaveLength(1);
    expect(summaryLines(invoked)[0]).toMatchObject({ phase });
  }

  it('event: a bad event', async () => {
    const { invoke } = localHandler(tables, standin.baseUrl);
    const invoked = await invoke(['not', 'an', 'event']);
    expectOneSummary(invoked, { level: 'ERROR', message: 'failed', phase: 'event', error: expect.stringMatching(/got an array/) });
    expectFailedMetrics(invoked, 'event');
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

describe('metric series budget', () => {
  // Runs after every test above (one file runs its tests in order): every kind of run is covered.
  afterAll(() => {
    console.info(`[metric series] ${seriesSeen.size} of ${METRIC_SERIES_BUDGET}: ${[...seriesSeen].sort().join(' ')}`);
  });

  it(`all the runs above emit at most ${METRIC_SERIES_BUDGET} distinct metric series (each one is billed monthly)`, () => {
    expect(seriesSeen.size).toBeGreaterThan(0);
    expect(seriesSeen.size).toBeLessThanOrEqual(METRIC_SERIES_BUDGET);
    expect([...seriesSeen].sort()).toEqual(
      Object.values(METRIC)
        .map((name) => `ContestSync/${name}{service=contest-sync}`)
        .sort(),
    );
  });
});
