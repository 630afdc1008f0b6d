/**
 * The HTTP API's routes, environment and limits: shared by the function, the stack (one API
 * Gateway route per entry) and the tests. It imports only the platforms (no imports of their own):
 * the CDK app loads it. docs/api.md.
 */
import { PLATFORMS, type Platform } from '../sources/platforms.js';

export { PLATFORMS, type Platform };

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
  { method: 'GET', path: '/contests', auth: 'jwt', summary: 'Upcoming (or recent) contests, as the app shows them' },
  { method: 'GET', path: '/me/reminders', auth: 'jwt', summary: "The caller's reminders" },
  { method: 'PUT', path: '/me/reminders/{contestId}', auth: 'jwt', summary: 'Set or change a reminder (idempotent)' },
  { method: 'DELETE', path: '/me/reminders/{contestId}', auth: 'jwt', summary: 'Cancel a reminder' },
  { method: 'GET', path: '/me/calendar', auth: 'jwt', summary: "Whether the caller's calendar feed is active" },
  { method: 'POST', path: '/me/calendar', auth: 'jwt', summary: 'Create or rotate the secret URL of the caller’s calendar feed' },
  { method: 'DELETE', path: '/me/calendar', auth: 'jwt', summary: "Revoke the caller's calendar feed" },
  { method: 'GET', path: '/calendar/codeforces.ics', auth: 'none', summary: 'The public calendar of Codeforces contests' },
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
