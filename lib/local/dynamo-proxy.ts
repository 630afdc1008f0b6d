/**
 * A small HTTP proxy in front of DynamoDB Local that counts requests on the wire by operation
 * (the `X-Amz-Target` header) and can delay them. The benchmarks count with it (requests are the
 * figure that carries over to AWS); the chaos runner injects DynamoDB latency with it.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface DynamoProxy {
  /** Point AWS_ENDPOINT_URL_DYNAMODB here. */
  readonly endpoint: string;
  /** Requests forwarded so far, by operation (e.g. `UpdateItem`). */
  readonly counts: Map<string, number>;
  total(): number;
  reset(): void;
  /** Delay for each request (ms), e.g. `() => Math.random() * 200`; default none. */
  setDelay(delay: ((operation: string) => number) | undefined): void;
  close(): Promise<void>;
}

export async function startDynamoProxy(target: string, options: { port?: number } = {}): Promise<DynamoProxy> {
  const upstream = new URL(target);
  const counts = new Map<string, number>();
  let delay: ((operation: string) => number) | undefined;
  const sockets = new Set<Socket>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const operation = String(req.headers['x-amz-target'] ?? 'unknown').split('.').pop() ?? 'unknown';
    counts.set(operation, (counts.get(operation) ?? 0) + 1);
    const wait = delay?.(operation) ?? 0;
    const forward = () => {
      const out = httpRequest(
        {
          hostname: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (reply) => {
          res.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(res);
        },
      );
      out.on('error', (error) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`proxy error: ${error.message}`);
      });
      req.pipe(out);
    };
    if (wait > 0) setTimeout(forward, wait);
    else forward();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts,
    total: () => [...counts.values()].reduce((sum, n) => sum + n, 0),
    reset: () => counts.clear(),
    setDelay: (next) => {
      delay = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
