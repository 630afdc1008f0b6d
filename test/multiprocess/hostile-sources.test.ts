/**
 * Hostile replies of AtCoder, CodeChef and LeetCode fed to each source's bundled function (what
 * `cdk deploy` uploads for its job), one child process per invocation, against DynamoDB Local and
 * the local stand-ins (local/source-standins.ts), as hostile-replies.test.ts does for Codeforces.
 * For each source: markup or shape changed, an empty body, a truncated body, HTTP 403, a Cloudflare
 * challenge (403 and 503), a 10 MB body, ids and names at their bounds and one past, a time without
 * its offset. Each run fails with its source's reason and a counted failure (RunFailed = 1 on the
 * job's own service), or refuses the bad entries (counted invalid); whatever the reply, it stays
 * small and releases its lease (test/support/hostile.ts); nothing stored is changed or wiped (the
 * Contests, Reminders and outbox tables, and every other job's lease and runs, compared before and
 * after), no reminder is paused, and the other sources' jobs sync all the same.
 */
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { METRIC } from '../../lambda/contract.js';
import { jobNames, type SourceJob } from '../../lambda/sources/job.js';
import { SOURCE_JOBS } from '../../lambda/sources/jobs.js';
import { LISTED_LIMITS } from '../../lambda/sources/source.js';
import { platformOf } from '../../lambda/sources/ids.js';
import { functionEnv } from '../../local/local-events.js';
import { defaultBodies, misbehave, type SourceStandinReply } from '../../local/source-standins.js';
import { sourceFunctionId, startOfflineSources, type OfflineSources } from '../../local/sync-sources.js';
import { bundleDirOfFunction, type CfnTemplate } from '../../local/template.js';
import { addReminder, scanAll, snapshot } from '../support/contests.js';
import { SOURCE_BODIES, type Entry } from '../support/source-bodies.js';
import { expectContained, intervalAt, leaseItem } from '../support/hostile.js';
import { invokeBundle, scheduledEvent, type InvocationOutcome } from '../support/processes.js';
import { createTestTables, synthesizedTemplate, type TestTables } from '../support/tables.js';

const anchorMs = Date.now();
let offline: OfflineSources;
let tables: TestTables;

const template = () => synthesizedTemplate() as CfnTemplate;
const jobOf = (platform: string): SourceJob => SOURCE_JOBS.find((job) => job.platform === platform)!;

/** Each job's own bundle, as the synthesis published it for its function. */
const entryOf = (job: SourceJob) =>
  join(bundleDirOfFunction(dirname(inject('templatePath')), template(), sourceFunctionId(template(), job)), 'index.mjs');

/**
 * One invocation of a job's bundle with its function's environment from the template. The budget
 * is short (above the lease's stop margin): a retryable failure (403, a challenge, a cut transfer) is
 * retried until its deadline.
 */
function invoke(job: SourceJob, event: unknown, timeoutMs = 25_000): Promise<InvocationOutcome> {
  return invokeBundle({
    entry: entryOf(job),
    event,
    env: {
      ...tables.env,
      ...functionEnv(template(), sourceFunctionId(template(), job), tables.names),
      AWS_ENDPOINT_URL_DYNAMODB: tables.endpoint,
      ...offline.env,
      LEASE_DURATION_SECONDS: '10',
    },
    timeoutMs,
  }).done;
}

/** What is stored: Contests and Reminders (test/support/contests.ts), the outbox, and every Coordination item but `job`'s own. */
async function stored(job: SourceJob) {
  const names = jobNames(job);
  const coordination = (await scanAll(tables.doc, tables.names.coordination)).filter(
    (item) => item.pk !== names.leaseKey && !String(item.pk).startsWith(names.runRecordPrefix),
  );
  const outbox = tables.names.outbox === undefined ? [] : await scanAll(tables.doc, tables.names.outbox);
  return { ...(await snapshot(tables)), coordination, outbox };
}

/** The RunFailed value the job's own service emitted (EMF), or undefined. */
function runFailedOf(outcome: InvocationOutcome, job: SourceJob): unknown {
  const emf = outcome.logs.filter((line) => line._aws !== undefined && line.service === jobNames(job).service && METRIC.runFailed in line);
  return emf.at(-1)?.[METRIC.runFailed];
}

beforeAll(async () => {
  offline = await startOfflineSources(anchorMs);
  tables = await createTestTables('hostile-sources');
  // A first, ordinary sync of every source, and a reminder on every upcoming contest of each.
  for (const job of SOURCE_JOBS) {
    const first = await invoke(job, scheduledEvent(intervalAt(1)));
    expect(first.summary, `${job.platform}: ${first.summary?.error ?? `${first.stderr}${first.stdout.slice(-1500)}`}`).toMatchObject({
      outcome: 'succeeded',
    });
  }
  const nowS = Math.floor(Date.now() / 1000);
  for (const contest of (await snapshot(tables)).contests) {
    const start = Number(contest.startTimeSeconds);
    if (contest.phase === 'BEFORE' && start > nowS + 3600) await addReminder(tables, String(contest.contestId), 'alice', 30, start);
  }
}, 180_000);

afterAll(async () => {
  await offline?.close();
});

afterEach(() => {
  const bodies = defaultBodies(anchorMs);
  for (const platform of ['atcoder', 'codechef', 'leetcode'] as const) offline.standins.setBody(platform, bodies[platform]);
  offline.standins.clearQueue();
});

/** Enough copies of `reply` that every attempt of a run gets it (a retryable failure is retried until the deadline). */
const everyAttempt = (reply: SourceStandinReply) => Array.from({ length: 40 }, () => reply);

/** Each failed reply, and what the run's error says of it after the source's label (`AtCoder`). */
const FAILED_REPLIES: { label: string; reply: SourceStandinReply; error: string; retried: boolean }[] = [
  { label: 'empty body', reply: misbehave.empty(), error: ' replied with an empty body \\(HTTP 200\\)$', retried: false },
  {
    label: 'truncated body',
    reply: misbehave.truncated(0.5),
    error: ': gave up after \\d+ attempts .*network error calling \\w+: other side closed',
    retried: true,
  },
  { label: 'HTTP 403', reply: misbehave.status(403, 'Forbidden'), error: ': gave up after .* a refusal \\(HTTP 403; ', retried: true },
  {
    label: 'challenge page, 403',
    reply: misbehave.challenge(403),
    error: ': gave up after .* a challenge page \\(HTTP 403; ',
    retried: true,
  },
  {
    label: 'challenge page, 503',
    reply: misbehave.challenge(503),
    error: ': gave up after .* a challenge page \\(HTTP 503; ',
    retried: true,
  },
  {
    label: '10 MB body',
    reply: misbehave.huge(10 * 1024 * 1024),
    error: ' reply refused: its body went past \\d+ bytes while streaming',
    retried: false,
  },
];

describe.each(['atcoder', 'codechef', 'leetcode'] as const)('hostile %s replies (bundled function of its own job)', (platform) => {
  const job = jobOf(platform);
  const hostility = SOURCE_BODIES[platform];
  const others = SOURCE_JOBS.filter((other) => other !== job);
  const requestsOf = () => offline.standins.requests.filter((r) => r.platform === platform).length;
  const contained = (label: string, outcome: InvocationOutcome, requestsBefore: number) =>
    expectContained(`${platform} ${label}`, outcome, { tables, leaseKey: jobNames(job).leaseKey, requests: requestsOf() - requestsBefore });

  /** A failed run of this job: its own reason, counted, and nothing stored changed. */
  async function expectFailedRun(label: string, error: RegExp) {
    const before = await stored(job);
    const requestsBefore = requestsOf();
    const run = await invoke(job, scheduledEvent(intervalAt(0)));
    await contained(label, run, requestsBefore);
    expect(run.ok).toBe(false); // a scheduled run throws its failure, for Lambda's retry
    expect(run.summary, run.summary?.error).toMatchObject({ outcome: 'failed', reason: platform, counts: { remindersPaused: 0 } });
    expect(run.summary?.error).toMatch(error);
    expect(runFailedOf(run, job), 'RunFailed on its own service').toBe(1);
    expect(await stored(job)).toEqual(before);
    return { run, requests: requestsOf() - requestsBefore };
  }

  it('markup or shape changed: the run fails on the shape, nothing stored changes, and the other sources sync all the same', async () => {
    offline.standins.setBody(platform, hostility.otherShape(defaultBodies(anchorMs)[platform]));
    await expectFailedRun('shape changed', hostility.shapeError);
    for (const other of others) {
      const run = await invoke(other, {});
      expect(run.summary, `${other.platform}: ${run.summary?.error}`).toMatchObject({
        outcome: 'succeeded',
        counts: { remindersPaused: 0 },
      });
    }
  });

  it.each(FAILED_REPLIES)('$label: the run fails with its reason, nothing stored changes', async ({ label, reply, error, retried }) => {
    offline.standins.enqueue(platform, ...everyAttempt(reply));
    const { requests } = await expectFailedRun(label, new RegExp(`^${job.label}Error: ${job.label}${error}`));
    if (retried) expect(requests).toBeGreaterThan(1);
    else expect(requests).toBe(1);
  });

  it('a time without its offset: that entry is refused and counted, its stored contest and reminders kept', async () => {
    const before = await stored(job);
    const reminded = before.reminders.find((r) => platformOf(String(r.contestId)) === platform);
    expect(reminded, 'a reminder on an upcoming contest').toBeDefined();
    const contestId = String(reminded!.contestId);
    offline.standins.setBody(platform, hostility.withoutOffset(defaultBodies(anchorMs)[platform], contestId.slice(platform.length + 1)));
    const requestsBefore = requestsOf();
    const run = await invoke(job, {});
    await contained('time without offset', run, requestsBefore);
    expect(run.summary, run.summary?.error).toMatchObject({
      outcome: 'succeeded',
      counts: { contestsWritten: 0, contestsRemoved: 0, contestsVanished: 0, remindersPaused: 0, remindersMoved: 0 },
    });
    // One more invalid entry than the unchanged reply has (the recorded AtCoder page has one).
    offline.standins.setBody(platform, defaultBodies(anchorMs)[platform]);
    const unchanged = await invoke(job, {});
    expect(run.summary?.counts.contestsInvalid).toBe((unchanged.summary?.counts.contestsInvalid ?? 0) + 1);
    const after = await stored(job);
    expect(after.contests).toEqual(before.contests);
    expect(after.reminders).toEqual(before.reminders);
    expect(after.coordination).toEqual(before.coordination);
  });

  it('ids and names at their bounds are stored; one past either bound is refused and counted', async () => {
    const before = await stored(job);
    const startSeconds = Math.floor(Date.now() / 1000) + 10 * 86_400;
    const { maxPlatformIdLength: maxId, maxNameLength: maxName } = LISTED_LIMITS;
    const atBound = { id: `b${'0'.repeat(maxId - 1)}`, name: 'n'.repeat(maxName), startSeconds };
    const idPast = { id: `c${'0'.repeat(maxId)}`, name: 'Id one past its bound', startSeconds };
    const namePast = { id: 'name-past-bound', name: 'n'.repeat(maxName + 1), startSeconds };
    const body = (...entries: Entry[]) => hostility.withEntries(defaultBodies(anchorMs)[platform], entries);
    // One past a bound per reply: two invalid entries are more than a tenth of CodeChef's short list.
    const runs: InvocationOutcome[] = [];
    for (const [label, past] of [
      ['id past its bound', idPast],
      ['name past its bound', namePast],
    ] as const) {
      offline.standins.setBody(platform, body(atBound, past));
      const requestsBefore = requestsOf();
      const run = await invoke(job, {});
      await contained(label, run, requestsBefore);
      expect(run.summary, run.summary?.error).toMatchObject({
        outcome: 'succeeded',
        counts: { contestsRemoved: 0, contestsVanished: 0, remindersPaused: 0, remindersMoved: 0 },
      });
      runs.push(run);
    }
    expect(runs.map((run) => run.summary?.counts.contestsWritten)).toEqual([1, 0]); // the one at its bounds, once
    const after = await stored(job);
    const added = after.contests.filter((c) => !before.contests.some((b) => b.contestId === c.contestId));
    expect(added.map((c) => [c.contestId, String(c.platformId).length, String(c.name).length])).toEqual([
      [`${platform}:${atBound.id}`, maxId, maxName],
    ]);
    expect(after.contests.filter((c) => c.contestId !== `${platform}:${atBound.id}`)).toEqual(before.contests);
    expect(after.reminders).toEqual(before.reminders);
    // Each past its bound counted invalid beside what the reply with the one at its bounds counts.
    offline.standins.setBody(platform, body(atBound));
    const baseline = (await invoke(job, {})).summary?.counts.contestsInvalid ?? 0;
    expect(runs.map((run) => run.summary?.counts.contestsInvalid)).toEqual([baseline + 1, baseline + 1]);
    expect((await leaseItem(tables, jobNames(job).leaseKey))?.holder).toBeUndefined();
  });
});
