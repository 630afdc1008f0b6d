/**
 * Turns what a trial recorded into the history the checker reads:
 *
 * - each worker's JSON log lines (stdout and stderr) into one RunHistory: its acquisition, its
 *   committed transactions, its summary (killed workers have partial histories);
 * - the DynamoDB wire records into StoreOps: lease acquire/renew/release and data writes, each
 *   with the window in which it landed and whether it did (`ok`), did not (`refused`) or may have
 *   (`unknown`).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { versionOf } from './dataset.js';
import type { WireRecord } from './taps.js';

export type LogLine = Record<string, unknown>;

export interface Commit {
  fence: number | undefined;
  sentAtMs: number;
  committedAtMs: number;
  contestsPut: string[];
  contestsDeleted: string[];
}

export interface RunSummaryLine {
  outcome: 'succeeded' | 'skipped' | 'failed';
  reason?: string;
  interval?: string;
  fence?: number;
  holder?: string;
  /** Why a skip has no holder (contention outlasted the acquire's retry budget). */
  detail?: string;
  /** What a failed run says went wrong. */
  error?: string;
}

export interface RunHistory {
  worker: number;
  runId?: string;
  source: 'schedule' | 'manual';
  interval?: string;
  /** Ended by SIGKILL: the history may stop anywhere. */
  killed: boolean;
  acquired?: { fence: number; acquiredAtMs: number; expiresAtMs: number };
  /** The expiry of each renewal the run logged as confirmed (`lease renewed`), in order. */
  renewals?: number[];
  commits: Commit[];
  summary?: RunSummaryLine;
  /** Contention retries the run logged (`DynamoDB contention; retrying`), by operation. */
  contentionRetries?: Record<string, number>;
  /** When the run started and ended (epoch ms, the runner's clock). */
  startedAtMs?: number;
  endedAtMs?: number;
  /** How long the run's process waited for a CPU, and when (the worker's starvation probe). */
  starvation?: { waitMs: number; samples: readonly { atMs: number; spanMs: number; waitMs: number; lagMs: number }[] };
}

/** JSON lines of a process's output (other lines, such as `@@RESULT`, are skipped). */
export function jsonLines(text: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(raw) as LogLine);
    } catch {
      // a line cut short by SIGKILL
    }
  }
  return lines;
}

const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function runHistory(input: {
  worker: number;
  source: 'schedule' | 'manual';
  interval?: string;
  killed: boolean;
  lines: LogLine[];
  /** The summary the handler returned or threw (`@@RESULT`), if the process got that far. */
  result?: RunSummaryLine & { runId?: string };
}): RunHistory {
  const run: RunHistory = {
    worker: input.worker,
    source: input.source,
    ...(input.interval !== undefined ? { interval: input.interval } : {}),
    killed: input.killed,
    commits: [],
    contentionRetries: {},
  };
  for (const line of input.lines) {
    run.runId ??= str(line.runId);
    const fence = num(line.fence);
    if (line.message === 'lease acquired' && fence !== undefined) {
      const acquiredAtMs = num(line.acquiredAtMs);
      const expiresAtMs = Date.parse(str(line.expiresAt) ?? '');
      if (acquiredAtMs !== undefined && Number.isFinite(expiresAtMs)) run.acquired = { fence, acquiredAtMs, expiresAtMs };
    } else if (line.message === 'lease renewed') {
      const expiresAtMs = Date.parse(str(line.expiresAt) ?? '');
      if (Number.isFinite(expiresAtMs)) (run.renewals ??= []).push(expiresAtMs);
    } else if (line.message === 'committed') {
      const sentAtMs = num(line.sentAtMs);
      const committedAtMs = num(line.committedAtMs);
      if (sentAtMs !== undefined && committedAtMs !== undefined) {
        run.commits.push({
          fence,
          sentAtMs,
          committedAtMs,
          contestsPut: Array.isArray(line.contestsPut) ? (line.contestsPut as string[]) : [],
          contestsDeleted: Array.isArray(line.contestsDeleted) ? (line.contestsDeleted as string[]) : [],
        });
      }
    } else if (line.message === 'DynamoDB contention; retrying') {
      const operation = str(line.operation) ?? '?';
      const retries = (run.contentionRetries ??= {});
      retries[operation] = (retries[operation] ?? 0) + 1;
    } else if (line.summary === true) {
      const outcome = str(line.outcome);
      if (outcome === 'succeeded' || outcome === 'skipped' || outcome === 'failed') {
        run.summary = {
          outcome,
          ...(str(line.reason ?? line.phase) !== undefined ? { reason: str(line.reason ?? line.phase) } : {}),
          ...(str(line.interval) !== undefined ? { interval: str(line.interval) } : {}),
          ...(fence !== undefined ? { fence } : {}),
          ...(str(line.holder) !== undefined ? { holder: str(line.holder) } : {}),
          ...(str(line.detail) !== undefined ? { detail: str(line.detail) } : {}),
          ...(str(line.error) !== undefined ? { error: str(line.error) } : {}),
        };
      }
    }
  }
  if (input.result !== undefined) {
    run.runId ??= input.result.runId;
    run.summary = {
      outcome: input.result.outcome,
      ...(input.result.reason !== undefined ? { reason: input.result.reason } : {}),
      ...(input.result.interval !== undefined ? { interval: input.result.interval } : {}),
      ...(input.result.fence !== undefined ? { fence: input.result.fence } : {}),
      ...(input.result.holder !== undefined ? { holder: input.result.holder } : {}),
      ...(input.result.detail !== undefined ? { detail: input.result.detail } : {}),
      ...(input.result.error !== undefined ? { error: input.result.error } : {}),
    };
  }
  return run;
}

// ---------------------------------------------------------------------------------------------
// The store's side: DynamoDB requests as they reached DynamoDB Local
// ---------------------------------------------------------------------------------------------

/** ok: applied. refused: not applied (condition failed, validation). unknown: may have been applied. */
export type OpOutcome = 'ok' | 'refused' | 'unknown';

interface Landing {
  /** The request reached DynamoDB after this... */
  forwardedAtMs: number;
  /** ...and was answered before this. */
  repliedAtMs: number;
  outcome: OpOutcome;
}

export type StoreOp = Landing &
  (
    | { kind: 'acquire'; runId: string; fence?: number; nowMs: number; expiresAtMs: number; interval?: string }
    | { kind: 'renew'; runId: string; fence: number; nowMs: number; expiresAtMs: number }
    | {
        kind: 'release';
        runId: string;
        fence: number;
        nowMs: number;
        lastRun?: { runId?: string; fence?: number; outcome?: string; interval?: string | null };
        marksDone: boolean;
      }
    | {
        kind: 'write';
        check?: { runId: string; fence: number };
        versions: number[];
        contestsPut: string[];
        contestsDeleted: string[];
        /** The contest every data action names (a reminder row's: its bucket key's contest; a gate's: its own key). */
        itemContests?: string[];
        actions: number;
      }
  );

export interface TableNames {
  contests: string;
  reminders: string;
  coordination: string;
}

type Json = Record<string, unknown>;

function values(raw: unknown): Json {
  if (raw === undefined || raw === null) return {};
  return unmarshall(raw as Record<string, AttributeValue>) as Json;
}

function outcomeOf(record: WireRecord): OpOutcome {
  if (record.status === 200) return 'ok';
  if (record.status >= 400 && record.status < 500) return 'refused';
  return 'unknown';
}

function isLeaseKey(body: Json, tables: TableNames, leaseKey: string): boolean {
  if (body.TableName !== tables.coordination) return false;
  return values(body.Key).pk === leaseKey;
}

function leaseUpdate(update: Json, landing: Landing, reply: Json | undefined): StoreOp | undefined {
  const expression = String(update.UpdateExpression ?? '');
  const v = values(update.ExpressionAttributeValues);
  const runId = String(v[':runId']);
  if (expression.includes('ADD fence')) {
    const attributes = reply?.Attributes === undefined ? undefined : values(reply.Attributes);
    const fence = typeof attributes?.fence === 'number' ? attributes.fence : undefined;
    return {
      ...landing,
      kind: 'acquire',
      runId,
      ...(fence !== undefined ? { fence } : {}),
      nowMs: Number(v[':now']),
      expiresAtMs: Number(v[':exp']),
      ...(typeof v[':interval'] === 'string' ? { interval: v[':interval'] } : {}),
    };
  }
  if (expression.includes('REMOVE holder')) {
    // Who releases: the condition's values, else the lastRun the release records.
    const lastRun = v[':lastRun'] as { runId?: string; fence?: number; outcome?: string; interval?: string | null } | undefined;
    return {
      ...landing,
      kind: 'release',
      runId: typeof v[':runId'] === 'string' ? v[':runId'] : String(lastRun?.runId),
      fence: Number(v[':fence'] ?? lastRun?.fence),
      nowMs: Number(v[':now']),
      ...(lastRun !== undefined ? { lastRun } : {}),
      marksDone: v[':done'] !== undefined,
    };
  }
  return { ...landing, kind: 'renew', runId, fence: Number(v[':fence']), nowMs: Number(v[':now']), expiresAtMs: Number(v[':exp']) };
}

/** The lease and data operations among the wire records, in the order they were answered. */
export function storeOps(records: readonly WireRecord[], tables: TableNames, leaseKey = 'lease#contest-sync'): StoreOp[] {
  const ops: StoreOp[] = [];
  // A TransactWriteItems retried with the same ClientRequestToken after it succeeded (the SDK
  // retries a connection dropped after apply) is answered 200 without being applied again: it
  // landed once, at its first success.
  const committedTokens = new Set<string>();
  for (const record of records) {
    const body = record.request as Json | undefined;
    if (body === undefined) continue;
    if (record.operation === 'TransactWriteItems' && typeof body.ClientRequestToken === 'string') {
      if (committedTokens.has(body.ClientRequestToken)) continue;
      if (record.status === 200) committedTokens.add(body.ClientRequestToken);
    }
    const landing: Landing = { forwardedAtMs: record.forwardedAtMs, repliedAtMs: record.repliedAtMs, outcome: outcomeOf(record) };
    if (record.operation === 'UpdateItem' && isLeaseKey(body, tables, leaseKey)) {
      const op = leaseUpdate(body, landing, record.reply as Json | undefined);
      if (op !== undefined) ops.push(op);
      continue;
    }
    if (record.operation !== 'TransactWriteItems') continue;
    const items = (Array.isArray(body.TransactItems) ? body.TransactItems : []) as Json[];
    const leaseUpdateItem = items
      .map((item) => item.Update as Json | undefined)
      .find((u) => u !== undefined && isLeaseKey(u, tables, leaseKey));
    if (leaseUpdateItem !== undefined) {
      const op = leaseUpdate(leaseUpdateItem, landing, undefined);
      if (op !== undefined) ops.push(op);
      continue;
    }
    let check: { runId: string; fence: number } | undefined;
    const versions = new Set<number>();
    const contestsPut: string[] = [];
    const contestsDeleted: string[] = [];
    const itemContests: string[] = [];
    let dataActions = 0;
    for (const item of items) {
      const [kind, action] = (Object.entries(item)[0] ?? []) as [string, Json];
      if (action === undefined) continue;
      if (kind === 'ConditionCheck' && isLeaseKey(action, tables, leaseKey)) {
        const v = values(action.ExpressionAttributeValues);
        check = { runId: String(v[':runId']), fence: Number(v[':fence']) };
        continue;
      }
      if (action.TableName !== tables.contests && action.TableName !== tables.reminders) continue;
      dataActions += 1;
      const key = values(action.Item ?? action.Key);
      itemContests.push(action.TableName === tables.contests ? String(key.contestId) : String(key.contestKey).replace(/#\d{2}$/, ''));
      if (action.TableName !== tables.contests) continue;
      if (kind === 'Put') {
        const put = values(action.Item);
        contestsPut.push(String(put.contestId));
        const version = versionOf(String(put.name ?? ''));
        if (version !== undefined) versions.add(version);
      } else if (kind === 'Delete') {
        contestsDeleted.push(String(values(action.Key).contestId));
      }
    }
    if (dataActions === 0) continue;
    ops.push({
      ...landing,
      kind: 'write',
      ...(check !== undefined ? { check } : {}),
      versions: [...versions].sort((a, b) => a - b),
      contestsPut,
      contestsDeleted,
      itemContests,
      actions: dataActions,
    });
  }
  return ops.sort((a, b) => a.repliedAtMs - b.repliedAtMs);
}
