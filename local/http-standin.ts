/**
 * What every local stand-in of an upstream platform shares (local/codeforces-standin.ts,
 * local/source-standins.ts): waits that end when the client goes away, a gate that holds replies
 * until released, a body streamed in chunks, and a server that closes promptly with requests in
 * flight. Never talks to the real platforms.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Resolves after `ms`, or early (quietly) when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Resolves when `promise` does, or early (quietly) when `signal` aborts. */
export function waitOrAbort(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void promise.then(done);
  });
}

/** Writes `payload` in 64 KiB chunks, waiting for the socket to drain; stops if the client goes away. */
export function streamChunks(res: ServerResponse, payload: Buffer): void {
  let offset = 0;
  const next = (): void => {
    while (offset < payload.length) {
      if (res.destroyed) return;
      const chunk = payload.subarray(offset, offset + 64 * 1024);
      offset += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', next);
        return;
      }
    }
    res.end();
  };
  next();
}

interface Gate {
  promise: Promise<void>;
  open: () => void;
  holds: number;
}

/** Replies wait while any hold is unreleased (`hold()` returns its release, idempotent). */
export class ReplyGate {
  private gate: Gate | undefined;

  hold(): () => void {
    if (this.gate === undefined) {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      this.gate = { promise, open, holds: 0 };
    }
    const current = this.gate;
    current.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      current.holds -= 1;
      if (current.holds > 0) return;
      if (this.gate === current) this.gate = undefined;
      current.open();
    };
  }

  /** Until every hold is released, or `signal` aborts. */
  wait(signal: AbortSignal): Promise<void> {
    return this.gate === undefined ? Promise.resolve() : waitOrAbort(this.gate.promise, signal);
  }
}

export interface ListeningStandin {
  server: Server;
  port: number;
  /** Aborted for every request in flight when the stand-in closes (or its client goes away: `gone`). */
  track(res: ServerResponse): { gone: AbortSignal; done: () => void };
  /** Stops listening and cuts every connection, including held and slow requests in flight. */
  close(): Promise<void>;
}

/** An HTTP server on loopback whose handler errors answer 500, and that closes promptly. */
export async function listenStandin(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  port = 0,
): Promise<ListeningStandin> {
  const inFlight = new Set<AbortController>();
  const sockets = new Set<Socket>();
  let closing = false;
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`stand-in error: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    if (closing) socket.destroy();
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const track = (res: ServerResponse) => {
    const gone = new AbortController();
    inFlight.add(gone);
    const onClose = (): void => gone.abort();
    res.on('close', onClose);
    return { gone: gone.signal, done: () => (res.off('close', onClose), inFlight.delete(gone)) };
  };
  const close = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const controller of inFlight) controller.abort();
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
    await closed;
  };
  return { server, port: (server.address() as AddressInfo).port, track, close };
}

/** `--name value` or `--name=value`. */
export function argValue(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  if (index !== -1) return args[index + 1];
  const inline = args.find((arg) => arg.startsWith(`${name}=`));
  return inline?.slice(name.length + 1);
}
