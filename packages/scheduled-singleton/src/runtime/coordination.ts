/**
 * Where a job's lease and fenced writes live. The wrapper opens the store once per container with
 * the job's configuration (from the environment the construct sets) and gets the two ports back:
 * DynamoDB by default (`dynamoCoordination`), or an in-memory store in a unit test
 * (`MemoryCoordination` from `@contest-sync/scheduled-singleton/testing`).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoLease } from './dynamo-lease.js';
import { DynamoFencedWriter, type CommitInfo } from './fenced-writer.js';
import type { FencedWriterPort, LeasePort } from './ports.js';
import type { LeaseTiming } from './timing.js';

/** What the wrapper knows of a job when it opens the store. */
export interface CoordinationConfig {
  /** The coordination table (`COORDINATION_TABLE_NAME`). */
  readonly table: string;
  /** The job's lease item (`LEASE_KEY`). */
  readonly key: string;
  readonly timing: LeaseTiming;
  /** How long succeeded intervals are remembered (`ledgerRetentionMs(periodMinutes)`). */
  readonly ledgerRetentionMs: number;
  readonly now: () => number;
  /**
   * Told of each contention retry (a store without contention never calls it).
   * @default none
   */
  readonly onContention?: (operation: string, reason: string, attempt: number) => void;
  /**
   * Told of each fenced transaction that committed.
   * @default none
   */
  readonly onCommit?: (info: CommitInfo) => void;
}

export interface CoordinationPorts {
  readonly lease: LeasePort;
  readonly writer: FencedWriterPort;
}

export interface CoordinationStore {
  open(config: CoordinationConfig): CoordinationPorts;
}

/** The lease and the fenced writes on DynamoDB, through `client`. */
export function dynamoCoordination(client: DynamoDBClient): CoordinationStore {
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return {
    open: ({ table, key, timing, ledgerRetentionMs, now, onContention, onCommit }) => ({
      lease: new DynamoLease({ doc, table, key, timing, now, ledgerRetentionMs, ...(onContention ? { onContention } : {}) }),
      writer: new DynamoFencedWriter(doc, {
        now,
        ...(onCommit ? { onCommit } : {}),
        ...(onContention ? { onContention: (reason, attempt) => onContention('commit', reason, attempt) } : {}),
      }),
    }),
  };
}
