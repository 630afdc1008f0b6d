/**
 * Whether a loopback port is free, asked before a script starts anything on it: `npm start` says
 * at once that its port is taken (and which one is free) rather than fail after DynamoDB Local
 * started. The answer can change before the port is used; the server's own error is caught too.
 */
import { createServer } from 'node:net';

/** True when something already listens on 127.0.0.1:`port` (what the local API Gateway binds). */
export async function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE'));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}

/** The first free port from `from` on (within 100), or 0 (any) if none is. */
export async function freePortFrom(from: number): Promise<number> {
  for (let port = from; port < Math.min(from + 100, 65_536); port += 1) if (!(await portInUse(port))) return port;
  return 0;
}

/** Whether `error` is a listen on a port in use. */
export function isPortInUse(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'EADDRINUSE';
}
