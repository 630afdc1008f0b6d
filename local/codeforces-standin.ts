/**
 * A programmable local stand-in for the Codeforces API (`GET /api/contest.list`), used by
 * `npm start -- --offline`, the integration, multi-process and chaos tests and the benchmarks.
 * Never talks to the real Codeforces.
 *
 * By default it serves `{"status":"OK","result":[...]}` with the recorded fixture rebased to now,
 * gzipped when the client sends `Accept-Encoding: gzip` (as the real API does). Tests can change
 * the list, slow every reply down, queue one-shot replies (errors, HTML challenge pages,
 * `Call limit exceeded`, truncated JSON...) and hold replies until released.
 *
 * As its own process: `npx tsx local/codeforces-standin.ts [--port N] [--delay MS]`
 * prints the base URL on stdout and serves until SIGINT/SIGTERM.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { argValue, listenStandin, pause, ReplyGate, streamChunks } from './http-standin.js';

export interface StandinReply {
  /** HTTP status, default 200. */
  status?: number;
  /** A string is sent as is; an object as JSON. Default: the OK envelope with the current list. */
  body?: string | object;
  headers?: Record<string, string>;
  /** Overrides the default delay for this reply. */
  delayMs?: number;
  /** true: always gzip; false: never; default: when the request accepts gzip. */
  gzip?: boolean;
  /** true: no Content-Length, the body streamed in 64 KiB chunks (chunked transfer encoding). */
  chunked?: boolean;
}

export interface CodeforcesStandin {
  /** http://127.0.0.1:PORT/api */
  readonly baseUrl: string;
  /** Every contest.list request, in arrival order (`at` is Date.now()). */
  readonly requests: { at: number; path: string }[];
  /** The list served by default as {status:"OK", result}. */
  setContests(contests: object[]): void;
  contests(): object[];
  /** Default delay of every reply (slow Codeforces). */
  setDelay(ms: number): void;
  /** One-shot replies served, in order, before falling back to the default. */
  enqueue(...replies: StandinReply[]): void;
  /** Drops the one-shot replies not yet served. */
  clearQueue(): void;
  /** Replies wait until the returned release() is called (every hold must be released). */
  hold(): () => void;
  /** Stops listening and cuts every connection, including held and slow requests in flight. */
  close(): Promise<void>;
}

const FIXTURE_URL = new URL('../test/fixtures/contest-list.json', import.meta.url);
const FIXTURE_META_URL = new URL('../test/fixtures/contest-list.meta.json', import.meta.url);

interface FixtureContest {
  startTimeSeconds?: number;
  relativeTimeSeconds?: number;
  [key: string]: unknown;
}

/** The recorded contest.list fixture with start times shifted by (now − recorded moment). */
export function recordedContestList(now: number = Date.now()): object[] {
  const reply = JSON.parse(readFileSync(FIXTURE_URL, 'utf8')) as { result: FixtureContest[] };
  const meta = JSON.parse(readFileSync(FIXTURE_META_URL, 'utf8')) as { recordedAtSeconds: number };
  const nowSeconds = Math.floor(now / 1000);
  const shift = nowSeconds - meta.recordedAtSeconds;
  return reply.result.map((contest) => {
    if (contest.startTimeSeconds === undefined) return { ...contest };
    const startTimeSeconds = contest.startTimeSeconds + shift;
    return { ...contest, startTimeSeconds, relativeTimeSeconds: nowSeconds - startTimeSeconds };
  });
}

/** `relativeTimeSeconds` (now − start) of every scheduled entry, as of `nowSeconds`. */
function made(list: readonly object[], nowSeconds: number): object[] {
  return list.map((entry) => {
    const start = (entry as { startTimeSeconds?: unknown }).startTimeSeconds;
    return typeof start === 'number' ? { ...entry, relativeTimeSeconds: nowSeconds - start } : entry;
  });
}

export async function startCodeforcesStandin(
  options: { port?: number; contests?: object[]; delayMs?: number } = {},
): Promise<CodeforcesStandin> {
  let list: object[] = options.contests ?? recordedContestList();
  let defaultDelayMs = options.delayMs ?? 0;
  const queue: StandinReply[] = [];
  const requests: { at: number; path: string }[] = [];
  const gate = new ReplyGate();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url ?? '/';
    const { pathname } = new URL(path, 'http://standin');
    if (req.method !== 'GET' || pathname !== '/api/contest.list') {
      send(res, req, {
        status: pathname.startsWith('/api/') ? 400 : 404,
        body: { status: 'FAILED', comment: `Method is not found: ${pathname}` },
      });
      return;
    }
    requests.push({ at: Date.now(), path });
    const reply = queue.shift() ?? {};

    // Cut waits short when the client goes away or the stand-in closes.
    const { gone, done } = standin.track(res);
    try {
      await gate.wait(gone);
      await pause(reply.delayMs ?? defaultDelayMs, gone);
      if (gone.aborted || res.destroyed) return;
      send(res, req, reply);
    } finally {
      done();
    }
  }

  function send(res: ServerResponse, req: IncomingMessage, reply: StandinReply): void {
    // Like Codeforces, the default list's relativeTimeSeconds is computed as the reply is made.
    const body = reply.body ?? { status: 'OK', result: made(list, Math.floor(Date.now() / 1000)) };
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const isHtml = typeof body === 'string' && /^\s*</.test(body);
    const headers: Record<string, string> = {
      'content-type': isHtml ? 'text/html; charset=UTF-8' : 'application/json;charset=UTF-8',
      ...reply.headers,
    };
    const acceptsGzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    let payload = Buffer.from(text, 'utf8');
    if (reply.gzip ?? acceptsGzip) {
      payload = gzipSync(payload);
      headers['content-encoding'] = 'gzip';
    }
    if (reply.chunked === true) {
      res.writeHead(reply.status ?? 200, headers);
      streamChunks(res, payload);
      return;
    }
    headers['content-length'] = String(payload.length);
    res.writeHead(reply.status ?? 200, headers);
    res.end(payload);
  }

  const standin = await listenStandin(handle, options.port ?? 0);

  return {
    baseUrl: `http://127.0.0.1:${standin.port}/api`,
    requests,
    setContests(contests) {
      list = [...contests];
    },
    contests() {
      return [...list];
    },
    setDelay(ms) {
      defaultDelayMs = ms;
    },
    clearQueue() {
      queue.length = 0;
    },
    enqueue(...replies) {
      queue.push(...replies);
    },
    hold: () => gate.hold(),
    close: () => standin.close(),
  };
}

async function main(args: string[]): Promise<void> {
  const port = Number(argValue(args, '--port') ?? 0);
  const delayMs = Number(argValue(args, '--delay') ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0..65535, got ${argValue(args, '--port')}`);
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new Error(`--delay must be a non-negative number of ms`);
  const standin = await startCodeforcesStandin({ port, delayMs });
  process.stdout.write(`${standin.baseUrl}\n`);
  const stop = (): void => {
    void standin.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`codeforces-standin: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
