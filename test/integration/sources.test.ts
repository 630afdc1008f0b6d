/**
 * A source that breaks pauses nothing of the others (docs/sources.md, "One job per source"): every
 * source's own job (its entry, its function's environment from the synthesized template) on
 * DynamoDB Local with the template's tables, against the local stand-ins. After a run where all
 * four sync, an AtCoder page with its tables renamed, a CodeChef reply with `status` not `success`
 * and a LeetCode 403 each leave that platform's stored contests and reminders as they were, with a
 * failed run (RunFailed = 1 on the job's own service: what its alarm reads), while Codeforces' run
 * succeeds. Every DynamoDB request of each job is allowed by that job's own role in the template, and
 * `npm run status` reads each job's own lease and runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStatus, statusJobOf } from '../../cli/status/read.js';
import { METRIC } from '../../lambda/contract.js';
import { jobNames, type SourceJob } from '../../lambda/sources/job.js';
import { SOURCE_JOBS } from '../../lambda/sources/jobs.js';
import { reminderKey } from '../../lambda/reminders/table.js';
import { platformOf } from '../../lambda/sources/ids.js';
import { defaultBodies, misbehave } from '../../local/source-standins.js';
import { sourceFunctionId, startOfflineSources, syncSources, type OfflineSources, type SourceRun } from '../../local/sync-sources.js';
import type { CfnTemplate } from '../../local/template.js';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { scanAll } from '../support/contests.js';
import { countingClient } from '../support/handler.js';
import { allows, callsOf, roleStatements, type Call } from '../support/iam.js';
import { scheduledEvent } from '../support/processes.js';
import { createTestTables, synthesizedTemplate, type TestTables } from '../support/tables.js';
import { tableDefinitionsFromTemplate, type TableRole } from '../../local/tables.js';

const HOUR_MS = 3_600_000;
let offline: OfflineSources;
let tables: TestTables;
const anchorMs = Date.now();

beforeAll(async () => {
  offline = await startOfflineSources(anchorMs);
  tables = await createTestTables('sources');
});
afterAll(async () => {
  await offline?.close();
});

const hourOf = (ms: number) => new Date(Math.floor(ms / HOUR_MS) * HOUR_MS).toISOString().replace(/\.\d+Z$/, 'Z');

/** Every source's job once, each with its own recorded DynamoDB requests and its own log and metric lines. */
async function runAll(time: string) {
  const counting = countingClient(tables.endpoint);
  let current: SourceJob | undefined;
  const calls = new Map<string, (Call & { index?: string })[]>();
  const lines = new Map<string, Record<string, unknown>[]>();
  counting.client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, any>;
      const index = input.IndexName !== undefined ? { index: String(input.IndexName) } : {};
      calls.get(current!.platform)!.push(...callsOf(context.commandName ?? 'unknown', input).map((call) => ({ ...call, ...index })));
      return next(args);
    },
    { step: 'initialize', name: 'recordCalls' },
  );
  const runs: SourceRun[] = [];
  for (const job of SOURCE_JOBS) {
    current = job;
    calls.set(job.platform, []);
    lines.set(job.platform, []);
    const [run] = await syncSources({
      template: synthesizedTemplate() as CfnTemplate,
      names: tables.names,
      client: counting.client,
      event: scheduledEvent(time),
      env: { ...offline.env, LEASE_DURATION_SECONDS: '10' },
      write: (line) => lines.get(job.platform)!.push(JSON.parse(line) as Record<string, unknown>),
      jobs: [job],
    });
    runs.push(run!);
  }
  return { runs, calls, lines };
}

/** What is stored of one platform: its contests and the reminders on them. */
async function storedOf(platform: string) {
  const contests = (await scanAll(tables.doc, tables.names.contests)).filter((item) => item.platform === platform);
  const reminders = (await scanAll(tables.doc, tables.names.reminders)).filter((item) => platformOf(String(item.contestId)) === platform);
  return { contests, reminders };
}

/** The RunFailed value the job's own service emitted (EMF), or undefined. */
function runFailedOf(lines: Record<string, unknown>[], job: SourceJob): unknown {
  const emf = lines.filter((line) => line._aws !== undefined && line.service === jobNames(job).service && METRIC.runFailed in line);
  return emf.at(-1)?.[METRIC.runFailed];
}

/** Requests of a job its own role in the template does not allow. */
function refusedOf(job: SourceJob, calls: (Call & { index?: string })[]): Call[] {
  const template = synthesizedTemplate() as CfnTemplate;
  const fn = (template.Resources as Record<string, { Properties?: any }>)[sourceFunctionId(template, job)]!;
  const statements = roleStatements(fn);
  const roleOf = new Map<string, string>(Object.entries(tables.names).map(([role, name]) => [name, role]));
  const logicalIdOf = new Map<string, string>(tableDefinitionsFromTemplate(template).map((d) => [d.role, d.logicalId]));
  const outboxId = Object.entries(template.Resources as Record<string, { Type: string }>).find(
    ([id, r]) => r.Type === 'AWS::DynamoDB::Table' && id.startsWith('EventsTable'),
  )?.[0];
  return calls.filter((call) => {
    const role = roleOf.get(call.table);
    const logicalId = role === 'outbox' ? outboxId! : logicalIdOf.get(role as TableRole)!;
    return !statements.some((statement) =>
      call.index !== undefined
        ? [statement.Action].flat().includes(call.action) && JSON.stringify(statement.Resource).includes(`/index/${call.index}"`)
        : allows(statement, call.action, logicalId, call.key),
    );
  });
}

describe('one job per source: a source that breaks pauses nothing of the others', () => {
  it('all four sync; then AtCoder, CodeChef and LeetCode break, each keeps what it stored and fails its own run, and Codeforces syncs', async () => {
    const first = await runAll(hourOf(anchorMs - HOUR_MS));
    for (const { job, summary } of first.runs) {
      expect(summary.outcome, `${job.platform}: ${summary.error}`).toBe('succeeded');
      expect(runFailedOf(first.lines.get(job.platform)!, job), job.platform).toBe(0);
      expect(refusedOf(job, first.calls.get(job.platform)!), job.platform).toEqual([]);
      // Its own ledger: the run record of this interval under its own prefix.
      expect(first.calls.get(job.platform)!.some((call) => call.key?.startsWith(jobNames(job).runRecordPrefix))).toBe(true);
    }

    // A reminder on an upcoming contest of each platform, far enough ahead that no doubt pauses it.
    const before = new Map<string, Awaited<ReturnType<typeof storedOf>>>();
    for (const job of SOURCE_JOBS) {
      const { contests } = await storedOf(job.platform);
      expect(contests.length, job.platform).toBeGreaterThan(0);
      const ahead = contests.find((c) => c.phase === 'BEFORE' && Number(c.startTimeSeconds) > anchorMs / 1000 + 6 * 3600) ?? contests[0]!;
      const contestId = String(ahead.contestId);
      const remindAt = Number(ahead.startTimeSeconds) - 1800;
      await tables.doc.send(
        new PutCommand({
          TableName: tables.names.reminders,
          Item: { ...reminderKey(contestId, 'alice'), contestId, userId: 'alice', minutesBefore: 30, remindAt },
        }),
      );
      before.set(job.platform, await storedOf(job.platform));
    }

    offline.standins.setBody('atcoder', (defaultBodies(anchorMs).atcoder as string).replace(/id="contest-table-/g, 'id="contest-list-'));
    offline.standins.setBody('codechef', { ...(defaultBodies(anchorMs).codechef as object), status: 'failure', message: 'maintenance' });
    offline.standins.enqueue('leetcode', ...Array.from({ length: 20 }, () => misbehave.status(403, 'Forbidden')));

    const second = await runAll(hourOf(anchorMs));
    const byPlatform = new Map(second.runs.map((run) => [run.job.platform, run]));
    expect(byPlatform.get('codeforces')!.summary.outcome).toBe('succeeded');
    expect(runFailedOf(second.lines.get('codeforces')!, byPlatform.get('codeforces')!.job)).toBe(0);
    for (const [platform, why] of [
      ['atcoder', /tables/],
      ['codechef', /status|failure/],
      ['leetcode', /403/],
    ] as const) {
      const { job, summary } = byPlatform.get(platform)!;
      expect(summary.outcome, platform).toBe('failed');
      expect(summary.reason, platform).toBe(platform);
      expect(summary.error, platform).toMatch(why);
      expect(runFailedOf(second.lines.get(platform)!, job), platform).toBe(1);
      expect(await storedOf(platform), platform).toEqual(before.get(platform));
    }
    for (const { job } of second.runs) expect(refusedOf(job, second.calls.get(job.platform)!), job.platform).toEqual([]);

    // `npm run status`, per source: each job's own lease and its own two runs, newest first.
    const client = countingClient(tables.endpoint).client;
    for (const job of SOURCE_JOBS) {
      const view = await readStatus(client, tables.names.coordination, job.label, 5, statusJobOf(job));
      expect(view.totalRuns, job.platform).toBe(2);
      expect(
        view.runs.map((run) => run.outcome),
        job.platform,
      ).toEqual([job.platform === 'codeforces' ? 'succeeded' : 'failed', 'succeeded']);
      expect(view.lease?.lastRun?.outcome, job.platform).toBe(job.platform === 'codeforces' ? 'succeeded' : 'failed');
    }
  }, 180_000);
});
