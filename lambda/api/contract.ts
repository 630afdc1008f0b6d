/**
 * The HTTP API's routes, environment and limits: shared by the function, the stack (one API
 * Gateway route per entry) and the tests. It imports only the platforms and the calendar's names
 * (no imports of their own): the CDK app loads it. docs/api.md.
 */
import { ALL_PLATFORMS_FEED } from '../calendar/contract.js';
import { PLATFORM_LABELS, PLATFORMS, type Platform } from '../sources/platforms.js';

export { PLATFORMS, type Platform };

/** The public calendar feeds: one per platform, and one of every platform's contests (docs/api.md, "Calendar"). */
export const PUBLIC_FEEDS = [...PLATFORMS, ALL_PLATFORMS_FEED] as const;
export type PublicFeed = (typeof PUBLIC_FEEDS)[number];

/** The route of a public feed: `GET /calendar/<feed>.ics`. */
function feedRoute<F extends PublicFeed>(feed: F) {
  const named: PublicFeed = feed;
  const of = named === ALL_PLATFORMS_FEED ? 'every platform’s contests' : `${PLATFORM_LABELS[named]} contests`;
  return {
    method: 'GET',
    path: `/calendar/${feed}.ics`,
    auth: 'none',
    summary: `The public calendar of ${of}`,
  } as const satisfies ApiRoute;
}

/** `jwt`: API Gateway's JWT authorizer runs first, the user is the token's `sub`; `none`: public. */
export type RouteAuth = 'jwt' | 'none';

export interface ApiRoute {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** API Gateway's path syntax (`{name}` for a path parameter). */
  readonly path: string;
  readonly auth: RouteAuth;
  readonly summary: string;
}

export const API_ROUTES = [
  {
    method: 'GET',
    path: '/contests',
    auth: 'jwt',
    summary: "Upcoming (or recent) contests, as the app shows them: every platform's, or one's",
  },
  { method: 'GET', path: '/me/reminders', auth: 'jwt', summary: "The caller's reminders" },
  { method: 'PUT', path: '/me/reminders/{contestId}', auth: 'jwt', summary: 'Set or change a reminder (idempotent)' },
  { method: 'DELETE', path: '/me/reminders/{contestId}', auth: 'jwt', summary: 'Cancel a reminder' },
  { method: 'GET', path: '/me/calendar', auth: 'jwt', summary: "Whether the caller's calendar feed is active" },
  { method: 'POST', path: '/me/calendar', auth: 'jwt', summary: 'Create or rotate the secret URL of the caller’s calendar feed' },
  { method: 'DELETE', path: '/me/calendar', auth: 'jwt', summary: "Revoke the caller's calendar feed" },
  ...PUBLIC_FEEDS.map(feedRoute),
  { method: 'GET', path: '/calendar/u/{file}', auth: 'none', summary: "A user's calendar feed, at its secret URL" },
  { method: 'GET', path: '/openapi.json', auth: 'none', summary: 'This description' },
] as const satisfies readonly ApiRoute[];

/** Bounds on what a request may carry (docs/api.md, "Limits"). */
export const API_LIMITS = {
  /** Largest request body the function parses (bytes); API Gateway's own limit is 10 MB. */
  maxBodyBytes: 4096,
  /** Largest page of contests or reminders. */
  maxPageSize: 100,
  defaultPageSize: 50,
  /** Longest `cursor` accepted (characters). */
  maxCursorChars: 1024,
  /** How far back `status=recent` reaches (seconds): a week. */
  recentWindowSeconds: 7 * 86_400,
} as const;
