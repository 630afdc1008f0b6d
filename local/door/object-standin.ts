/**
 * A local S3 bucket for the feed objects (S3 does not run here): an HTTP server answering the
 * AWS SDK's path-style `GetObject` (with `If-None-Match`: 304 for the same entity tag),
 * `PutObject` and `DeleteObject` (`AWS_ENDPOINT_URL_S3`), objects in memory. Enough for
 * lambda/calendar/store.ts, nothing more.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ObjectStandin {
  endpoint: string;
  /** Stored bodies by `bucket/key`. */
  readonly objects: Map<string, { body: Buffer; etag: string }>;
  /** Requests answered, by method (`GET` includes the 304s). */
  readonly requests: Map<string, number>;
  close(): Promise<void>;
}

const NO_SUCH_KEY =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>';

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function answer(objects: ObjectStandin['objects'], req: IncomingMessage, res: ServerResponse, key: string, body: Buffer): void {
  const stored = objects.get(key);
  if (req.method === 'PUT') {
    const etag = `"${createHash('md5').update(body).digest('hex')}"`;
    objects.set(key, { body, etag });
    res.writeHead(200, { etag }).end();
  } else if (req.method === 'DELETE') {
    objects.delete(key);
    res.writeHead(204).end();
  } else if (req.method === 'GET' && stored === undefined) {
    res.writeHead(404, { 'content-type': 'application/xml' }).end(NO_SUCH_KEY);
  } else if (req.method === 'GET' && req.headers['if-none-match'] === stored!.etag) {
    res.writeHead(304, { etag: stored!.etag }).end();
  } else if (req.method === 'GET') {
    res.writeHead(200, { etag: stored!.etag, 'content-length': stored!.body.length }).end(stored!.body);
  } else {
    res.writeHead(405).end();
  }
}

export async function startObjectStandin(): Promise<ObjectStandin> {
  const objects: ObjectStandin['objects'] = new Map();
  const requests = new Map<string, number>();
  const server = createServer((req, res) => {
    const key = decodeURIComponent(new URL(req.url ?? '/', 'http://local').pathname.slice(1));
    requests.set(req.method ?? '', (requests.get(req.method ?? '') ?? 0) + 1);
    bodyOf(req)
      .then((body) => answer(objects, req, res, key, body))
      .catch(() => res.writeHead(500).end());
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    objects,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
