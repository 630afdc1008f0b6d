/**
 * Types for dynamodb-lock-client 0.7.3 (it ships none), written from its index.js and schema/:
 * only what bench/peers.ts uses.
 */
declare module 'dynamodb-lock-client' {
  import type { EventEmitter } from 'node:events';

  /** An aws-sdk v2 DynamoDB.DocumentClient (the library calls its get, put and delete). */
  interface DocumentClientLike {
    get: (...args: never[]) => unknown;
    put: (...args: never[]) => unknown;
    delete: (...args: never[]) => unknown;
  }

  interface CommonConfig {
    dynamodb: DocumentClientLike;
    lockTable: string;
    partitionKey: string;
    sortKey?: string;
    owner?: string;
    retryCount?: number;
  }

  export interface FailClosedConfig extends CommonConfig {
    acquirePeriodMs: number;
  }

  export interface FailOpenConfig extends CommonConfig {
    leaseDurationMs: number;
    heartbeatPeriodMs?: number;
    trustLocalTime?: boolean;
  }

  export interface Lock extends EventEmitter {
    /** FailOpen only. */
    readonly fencingToken?: number;
    release(callback: (error?: Error & { code?: string }) => void): void;
  }

  type AcquireCallback = (error: (Error & { code?: string }) | undefined, lock: Lock) => void;

  export class FailClosed {
    constructor(config: FailClosedConfig);
    acquireLock(id: string | Record<string, unknown>, callback: AcquireCallback): void;
  }

  export class FailOpen {
    constructor(config: FailOpenConfig);
    acquireLock(id: string | Record<string, unknown>, callback: AcquireCallback): void;
  }

  const lockClient: { FailClosed: typeof FailClosed; FailOpen: typeof FailOpen };
  export default lockClient;
}
