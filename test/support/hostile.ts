/**
 * What every hostile-reply run of a bundled sync must leave (test/multiprocess/hostile-*.test.ts):
 * a small result, small log lines (stdout and stderr), small error texts, a released lease and a
 * small run record (Lambda result ≤ 6 MB, CloudWatch Logs event ≤ 256 KB, DynamoDB item ≤ 400 KB).
 */
import { expect } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { MAX_TEXT_BYTES } from '@contest-sync/scheduled-singleton';
import { scanAll } from './contests.js';
import type { InvocationOutcome } from './processes.js';
import type { TestTables } from './tables.js';

/** Small: far below every platform limit, and what an operator can read. */
export const SMALL = 8 * 1024;

export const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** An EventBridge schedule's `time`, `hoursAgo` hours back (whole seconds). */
export const intervalAt = (hoursAgo: number) => new Date(Date.now() - hoursAgo * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');

export async function leaseItem(tables: TestTables, leaseKey: string) {
  const out = await tables.doc.send(new GetCommand({ TableName: tables.names.coordination, Key: { pk: leaseKey }, ConsistentRead: true }));
  return out.Item;
}

export interface ContainedOptions {
  tables: TestTables;
  /** The job's lease item key (`lease#contest-sync` for Codeforces). */
  leaseKey: string;
  /** Requests the platform's stand-in received (printed). */
  requests: number;
}

/** Asserts what every hostile run must leave, and prints what it saw. */
export async function expectContained(label: string, outcome: InvocationOutcome, options: ContainedOptions): Promise<void> {
  const { tables } = options;
  const resultLine = outcome.stdout.slice(outcome.stdout.lastIndexOf('@@RESULT '));
  const lines = [...outcome.stdout.split('\n'), ...outcome.stderr.split('\n')];
  const largestLine = Math.max(...lines.map(bytes));
  const resultBytes = bytes(JSON.stringify(outcome.result ?? outcome.error ?? null));
  const item = await leaseItem(tables, options.leaseKey);
  const records = (await scanAll(tables.doc, tables.names.coordination)).filter((r) => String(r.pk).startsWith('run#'));
  const record = records.find((r) => r.runId === outcome.summary?.runId);
  const recordBytes = bytes(JSON.stringify(record ?? null));
  console.info(
    `[hostile ${label}] ${JSON.stringify({
      outcome: outcome.summary?.outcome,
      reason: outcome.summary?.reason,
      invalid: outcome.summary?.counts.contestsInvalid,
      requests: options.requests,
      resultBytes,
      resultLineBytes: bytes(resultLine),
      largestLogLineBytes: largestLine,
      runRecordBytes: recordBytes,
      errorBytes: bytes(outcome.summary?.error ?? ''),
      leaseHolder: item?.holder ?? null,
      error: (outcome.summary?.error ?? '').slice(0, 160),
    })}`,
  );
  expect(outcome.summary, outcome.stderr).toBeDefined();
  expect(resultBytes).toBeLessThan(SMALL);
  expect(bytes(resultLine)).toBeLessThan(SMALL);
  expect(largestLine).toBeLessThan(SMALL);
  expect(bytes(outcome.summary?.error ?? '')).toBeLessThanOrEqual(MAX_TEXT_BYTES);
  expect(bytes(outcome.error?.message ?? '')).toBeLessThanOrEqual(MAX_TEXT_BYTES);
  expect(item?.holder).toBeUndefined();
  expect(record, 'the run record was written').toBeDefined();
  expect(recordBytes).toBeLessThan(SMALL);
  expect(bytes(String(record?.error ?? ''))).toBeLessThanOrEqual(MAX_TEXT_BYTES);
}
