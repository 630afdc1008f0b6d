/**
 * The calendar feeds over HTTP (docs/api.md, "Calendar"): the public feeds (one per platform, one
 * of every platform: the routes of PUBLIC_FEEDS) and a user's feed at its
 * secret URL, read as stored objects with `If-None-Match`, so an unchanged poll answers 304 and
 * reads no table. A token that is malformed, revoked or rotated away is answered like one that
 * never existed.
 */
import type { Router } from '@aws-lambda-powertools/event-handler/http';
import { PUBLIC_FEEDS } from './contract.js';
import { ApiError } from './errors.js';
import type { FeedRead, Feeds, RouterEnv } from './ports.js';

/** A feed token: 256 random bits, base64url (43 characters); the URL's file is `<token>.ics`. */
const FEED_FILE = /^([A-Za-z0-9_-]{43})\.ics$/;
/** Calendar clients poll; five minutes between two fetches of one client is plenty. */
const MAX_AGE_SECONDS = 300;

export function tokenOfFile(file: string): string | undefined {
  return FEED_FILE.exec(file)?.[1];
}

/** The answer for a read feed: the calendar, 304 for an unchanged one, or not found. */
export function feedResponse(read: FeedRead, visibility: 'public' | 'private'): Response {
  if (read.status === 'missing') throw new ApiError('feed-not-found', 'no such calendar feed');
  const headers = { etag: read.etag, 'cache-control': `${visibility}, max-age=${MAX_AGE_SECONDS}` };
  if (read.status === 'not-modified') return new Response(null, { status: 304, headers });
  return new Response(read.body, { status: 200, headers: { ...headers, 'content-type': 'text/calendar; charset=utf-8' } });
}

export function feedRoutes(app: Router<RouterEnv>, feeds: Feeds): void {
  for (const feed of PUBLIC_FEEDS) {
    app.get(`/calendar/${feed}.ics`, async (reqCtx) => {
      const ifNoneMatch = reqCtx.req.headers.get('if-none-match') ?? undefined;
      return feedResponse(await feeds.read({ public: feed }, ifNoneMatch), 'public');
    });
  }
  app.get('/calendar/u/:file', async (reqCtx) => {
    const token = tokenOfFile(reqCtx.params.file ?? '');
    if (token === undefined) throw new ApiError('feed-not-found', 'no such calendar feed');
    const ifNoneMatch = reqCtx.req.headers.get('if-none-match') ?? undefined;
    return feedResponse(await feeds.read({ token }, ifNoneMatch), 'private');
  });
}
