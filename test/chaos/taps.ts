/**
 * Two recording hops that give the checker the store's and Codeforces' side of the history:
 *
 *   worker ──► Codeforces tap ──► Codeforces stand-in
 *   worker ──► DynamoDB proxy (delays) ──► DynamoDB recorder ──► DynamoDB Local
 *
 * The Codeforces tap tells workers apart by a path prefix (`/w<id>/api/contest.list`), lets the
 * runner act on each request before it is forwarded (inject a fault, change the list), and records
 * which list version each worker was served. The DynamoDB recorder sits right before DynamoDB
 * Local: it forwards a request only once its body is complete and records, for every request,
 * when it was forwarded and when the reply came back, so each write landed inside that window.
 */
import { readBody } from '../../local/dynamo-proxy.js';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { versionOf } from './dataset.js';

export interface CodeforcesRecord {
  worker: number;
  /** Index of the request in arrival order at the tap. */
  n: number;
  arrivedAtMs: number;
  endedAtMs?: number;
  status?: number;
  /** List version of an OK reply (`[vN]` in the names). */
  version?: number;
}

export interface CodeforcesTap {
  /** Base URL of the API for worker `id` (CODEFORCES_API_URL). */
  baseUrlFor(worker: number): string;
  readonly records: CodeforcesRecord[];
  close(): Promise<void>;
}

interface Server {
  endpoint: string;
  close(): Promise<void>;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  const sockets = new Set<Socket>();
  const server = createServer(handler);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Forwards `/w<id>/api/...` to `standinBaseUrl` (`http://host:port/api`). `onRequest` runs before
 * the request is forwarded (the stand-in picks one-shot replies and the list when it answers).
 */
export async function startCodeforcesTap(standinBaseUrl: string, onRequest: (record: CodeforcesRecord) => void): Promise<CodeforcesTap> {
  const upstream = new URL(standinBaseUrl);
  const records: CodeforcesRecord[] = [];
  const server = await listen((req, res) => {
    const match = /^\/w(\d+)(\/.*)$/.exec(req.url ?? '');
    if (match === null) {
      res.writeHead(404).end();
      return;
    }
    const record: CodeforcesRecord = { worker: Number(match[1]), n: records.length, arrivedAtMs: Date.now() };
    records.push(record);
    onRequest(record);
    const headers = { ...req.headers, host: upstream.host };
    delete headers['accept-encoding']; // plain replies: the tap reads the version
    const out = httpRequest({ hostname: upstream.hostname, port: upstream.port, method: req.method, path: match[2], headers }, (reply) => {
      const chunks: Buffer[] = [];
      reply.on('data', (chunk: Buffer) => chunks.push(chunk));
      reply.on('end', () => {
        const body = Buffer.concat(chunks);
        record.endedAtMs = Date.now();
        record.status = reply.statusCode;
        if (reply.statusCode === 200) {
          const version = versionOf(body.toString('utf8'));
          if (version !== undefined) record.version = version;
        }
        if (res.destroyed) return;
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        res.end(body);
      });
      reply.on('error', () => res.destroy());
    });
    out.on('error', () => res.destroy());
    res.on('close', () => {
      if (record.endedAtMs === undefined) out.destroy();
    });
    out.end();
  });
  return {
    baseUrlFor: (worker) => `${server.endpoint}/w${worker}/api`,
    records,
    close: server.close,
  };
}

export interface WireRecord {
  seq: number;
  /** X-Amz-Target operation, e.g. UpdateItem. */
  operation: string;
  /** When the complete request was sent to DynamoDB Local (the write landed after this). */
  forwardedAtMs: number;
  /** When its reply had fully arrived (the write landed before this). */
  repliedAtMs: number;
  status: number;
  request: unknown;
  /** Parsed reply body of UpdateItem and TransactWriteItems (others are not kept). */
  reply?: unknown;
}

export interface DynamoRecorder {
  readonly endpoint: string;
  readonly records: WireRecord[];
  close(): Promise<void>;
}

const KEEP_REPLY = new Set(['UpdateItem', 'TransactWriteItems']);
const KEEP_REQUEST = new Set(['UpdateItem', 'TransactWriteItems', 'PutItem', 'DeleteItem', 'BatchWriteItem']);

export async function startDynamoRecorder(target: string): Promise<DynamoRecorder> {
  const upstream = new URL(target);
  const records: WireRecord[] = [];
  let seq = 0;
  const server = await listen((req, res) => {
    const operation =
      String(req.headers['x-amz-target'] ?? 'unknown')
        .split('.')
        .pop() ?? 'unknown';
    readBody(req).then(
      (body) => {
        const forwardedAtMs = Date.now();
        const out = httpRequest(
          { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
          (reply) => {
            const chunks: Buffer[] = [];
            reply.on('data', (chunk: Buffer) => chunks.push(chunk));
            reply.on('end', () => {
              const replyBody = Buffer.concat(chunks);
              const record: WireRecord = {
                seq: seq++,
                operation,
                forwardedAtMs,
                repliedAtMs: Date.now(),
                status: reply.statusCode ?? 0,
                request: KEEP_REQUEST.has(operation) ? parseJson(body) : undefined,
              };
              if (KEEP_REPLY.has(operation)) record.reply = parseJson(replyBody);
              records.push(record);
              if (res.destroyed) return;
              res.writeHead(reply.statusCode ?? 502, reply.headers);
              res.end(replyBody);
            });
          },
        );
        out.on('error', (error) => {
          // The outcome is unknown (status 0): the checker treats the write as possibly landed.
          records.push({
            seq: seq++,
            operation,
            forwardedAtMs,
            repliedAtMs: Date.now(),
            status: 0,
            request: KEEP_REQUEST.has(operation) ? parseJson(body) : undefined,
          });
          if (!res.headersSent && !res.destroyed) res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(`recorder error: ${error.message}`);
        });
        out.end(body);
      },
      () => res.destroy(), // incomplete request: never forwarded
    );
  });
  return { endpoint: server.endpoint, records, close: server.close };
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
