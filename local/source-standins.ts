/**
 * Programmable local stand-ins for AtCoder, CodeChef and LeetCode, one HTTP server on loopback
 * serving all three at their real paths under a prefix each:
 *   GET  {base}/atcoder/contests/?lang=en             the contests page (HTML)
 *   GET  {base}/codechef/api/list/contests/all?…      the contest list (JSON)
 *   POST {base}/leetcode/graphql                      allContests (JSON)
 * By default each serves its fixture (local/source-fixtures.ts) with times shifted to the moment
 * the stand-in started (or `anchorMs`), gzipped when the client accepts gzip, with the `Date` header
 * every HTTP server sends. Like LeetCode, the GraphQL path refuses (403) a request without a JSON
 * Content-Type or a Referer/Origin. Tests and offline runs make a platform misbehave by queueing
 * one-shot replies (`misbehave`: a status, a challenge page, a truncated or a huge body, a slow
 * reply), slowing every reply, or holding replies until released. Never talks to the real sites.
 *
 * As its own process: `npx tsx local/source-standins.ts [--port N]` prints the base URLs as JSON
 * on stdout and serves until SIGINT/SIGTERM.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { argValue, listenStandin, pause, ReplyGate, streamChunks } from './http-standin.js';
import { atcoderPage, CHALLENGE_PAGE, codechefReply, leetcodeReply, type FixturePlatform } from './source-fixtures.js';

export { CHALLENGE_PAGE } from './source-fixtures.js';

export type StandinPlatform = FixturePlatform;

export interface SourceStandinReply {
  /** HTTP status. @default 200 */
  status?: number;
  /** A string is sent as is, an object as JSON. @default the platform's current body */
  body?: string | object;
  headers?: Record<string, string>;
  /** Overrides the platform's delay for this reply. */
  delayMs?: number;
  /** true: always gzip; false: never. @default when the request accepts gzip */
  gzip?: boolean;
  /** No Content-Length, the body streamed in 64 KiB chunks. */
  chunked?: boolean;
  /** Declares the whole body's Content-Length, sends this share of it (0..1) and cuts the connection. */
  truncateAt?: number;
}

/** One-shot misbehaviours to `enqueue`. */
export const misbehave = {
  status: (status: number, body = `HTTP ${status}`): SourceStandinReply => ({ status, body, headers: { 'content-type': 'text/plain' } }),
  challenge: (status = 403): SourceStandinReply => ({
    status,
    body: CHALLENGE_PAGE,
    headers: { 'content-type': 'text/html; charset=UTF-8', 'cf-mitigated': 'challenge' },
  }),
  /** The platform's body, its Content-Length declared whole, cut at `share` of it. */
  truncated: (share = 0.5): SourceStandinReply => ({ truncateAt: share, gzip: false }),
  /** A body of `bytes` spaces, streamed without a Content-Length. */
  huge: (bytes = 10 * 1024 * 1024): SourceStandinReply => ({ body: ' '.repeat(bytes), chunked: true, gzip: false }),
  slow: (delayMs: number): SourceStandinReply => ({ delayMs }),
  empty: (): SourceStandinReply => ({ body: '' }),
};

export interface SourceStandin {
  /** `http://127.0.0.1:PORT/<platform>`: each source's `baseUrl`. */
  readonly baseUrls: Readonly<Record<StandinPlatform, string>>;
  /** Every request to a platform's path, in arrival order (`at` is Date.now()). */
  readonly requests: { platform: StandinPlatform; at: number; method: string; path: string; headers: IncomingMessage['headers'] }[];
  /** Replaces what a platform serves by default (e.g. a page with its tables renamed). */
  setBody(platform: StandinPlatform, body: string | object): void;
  /** Default delay of every reply of a platform (a slow platform). */
  setDelay(platform: StandinPlatform, ms: number): void;
  /** One-shot replies of a platform, served in order before falling back to its default. */
  enqueue(platform: StandinPlatform, ...replies: SourceStandinReply[]): void;
  clearQueue(platform?: StandinPlatform): void;
  /** Replies wait until the returned release() is called (every hold must be released). */
  hold(): () => void;
  close(): Promise<void>;
}

const PLATFORMS: readonly StandinPlatform[] = ['atcoder', 'codechef', 'leetcode'];

const PATHS: Record<StandinPlatform, { method: string; path: string }> = {
  atcoder: { method: 'GET', path: '/contests/' },
  codechef: { method: 'GET', path: '/api/list/contests/all' },
  leetcode: { method: 'POST', path: '/graphql' },
};

/** The platform a request is for, or the status it is refused with (404: no such path, 405: wrong method). */
function route(req: IncomingMessage): StandinPlatform | 404 | 405 {
  const { pathname } = new URL(req.url ?? '/', 'http://standin');
  const [, prefix = '', ...rest] = pathname.split('/');
  const platform = PLATFORMS.find((p) => p === prefix);
  if (platform === undefined || `/${rest.join('/')}` !== PATHS[platform].path) return 404;
  return req.method === PATHS[platform].method ? platform : 405;
}

/** LeetCode refuses a GraphQL call that does not look like its own site's. */
function leetcodeRefuses(req: IncomingMessage): boolean {
  const json = /application\/json/i.test(String(req.headers['content-type'] ?? ''));
  return !json || req.headers.referer === undefined || req.headers.origin === undefined;
}

function send(req: IncomingMessage, res: ServerResponse, reply: SourceStandinReply, fallback: string | object): void {
  const body = reply.body ?? fallback;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const html = typeof body === 'string' && /^\s*</.test(body);
  const headers: Record<string, string> = {
    'content-type': html ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8',
    ...reply.headers,
  };
  let payload = Buffer.from(text, 'utf8');
  if (reply.gzip ?? /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
    payload = gzipSync(payload);
    headers['content-encoding'] = 'gzip';
  }
  if (reply.chunked === true) {
    res.writeHead(reply.status ?? 200, headers);
    streamChunks(res, payload);
    return;
  }
  res.writeHead(reply.status ?? 200, { ...headers, 'content-length': String(payload.length) });
  if (reply.truncateAt === undefined) res.end(payload);
  else res.write(payload.subarray(0, Math.floor(payload.length * reply.truncateAt)), () => res.destroy());
}

/** The fixtures as served by default, shifted to `anchorMs`. */
export function defaultBodies(anchorMs: number = Date.now()): Record<StandinPlatform, string | object> {
  return { atcoder: atcoderPage(anchorMs), codechef: codechefReply(anchorMs), leetcode: leetcodeReply(anchorMs) };
}

export async function startSourceStandins(options: { port?: number; anchorMs?: number } = {}): Promise<SourceStandin> {
  const bodies = defaultBodies(options.anchorMs);
  const delays: Record<StandinPlatform, number> = { atcoder: 0, codechef: 0, leetcode: 0 };
  const queues: Record<StandinPlatform, SourceStandinReply[]> = { atcoder: [], codechef: [], leetcode: [] };
  const requests: SourceStandin['requests'] = [];
  const gate = new ReplyGate();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const platform = route(req);
    if (typeof platform === 'number') return send(req, res, misbehave.status(platform, 'not a stand-in path'), '');
    requests.push({ platform, at: Date.now(), method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    req.resume();
    if (platform === 'leetcode' && leetcodeRefuses(req)) return send(req, res, misbehave.status(403, 'Forbidden'), '');
    const reply = queues[platform].shift() ?? {};
    const { gone, done } = standin.track(res);
    try {
      await gate.wait(gone);
      await pause(reply.delayMs ?? delays[platform], gone);
      if (!gone.aborted && !res.destroyed) send(req, res, reply, bodies[platform]);
    } finally {
      done();
    }
  }

  const standin = await listenStandin(handle, options.port);
  const base = `http://127.0.0.1:${standin.port}`;
  return {
    baseUrls: { atcoder: `${base}/atcoder`, codechef: `${base}/codechef`, leetcode: `${base}/leetcode` },
    requests,
    setBody: (platform, body) => void (bodies[platform] = body),
    setDelay: (platform, ms) => void (delays[platform] = ms),
    enqueue: (platform, ...replies) => void queues[platform].push(...replies),
    clearQueue: (platform) => {
      for (const p of platform === undefined ? PLATFORMS : [platform]) queues[p].length = 0;
    },
    hold: () => gate.hold(),
    close: () => standin.close(),
  };
}

async function main(args: string[]): Promise<void> {
  const port = Number(argValue(args, '--port') ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0..65535, got ${argValue(args, '--port')}`);
  const standin = await startSourceStandins({ port });
  process.stdout.write(`${JSON.stringify(standin.baseUrls)}\n`);
  const stop = (): void => void standin.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`source-standins: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
