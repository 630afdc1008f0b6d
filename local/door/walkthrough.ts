/**
 * What `npm start` does at the door, step by step, as an app would: set a reminder through the
 * API with the demo user's token, then ask for the user's calendar feed and keep both feeds on
 * disk as they change; and what it prints for a person to try (the token, the curl commands, the
 * feed URLs), in an order that works. README.md, "The app's door, locally".
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PUBLIC_FEEDS, type PublicFeed } from '../../lambda/api/contract.js';
import { FEED_OBJECTS } from '../../lambda/calendar/contract.js';
import { PLATFORMS } from '../../lambda/sources/platforms.js';
import type { DoorTable } from '../../lambda/calendar/store.js';
import { FEED_BUCKET, type LocalDoor } from './door.js';

export const DEMO_USER = 'local-user';

export interface ApiAnswer {
  status: number;
  body: any;
}

/** One request to the local API as the app sends it (JSON in, JSON out). */
export async function callApi(
  door: Pick<LocalDoor, 'url'>,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiAnswer> {
  const answer = await fetch(`${door.url}${path}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await answer.text();
  const json = (answer.headers.get('content-type') ?? '').includes('json') && text !== '' ? JSON.parse(text) : text;
  return { status: answer.status, body: json };
}

/** The user's feed URL: `POST /me/calendar` as the app asks for it, once its feed is built. */
export async function createFeed(door: Pick<LocalDoor, 'url' | 'settled'>, token: string): Promise<string> {
  const created = await callApi(door, token, 'POST', '/me/calendar');
  if (created.status !== 201) throw new Error(`POST /me/calendar answered ${created.status}: ${JSON.stringify(created.body)}`);
  await door.settled();
  return String(created.body.url);
}

export interface CalendarFollower {
  /** The files it keeps: each public feed's (`<platform>.ics`, `all.ics`), and the user's. */
  readonly files: { public: Readonly<Record<PublicFeed, string>>; user: string };
  /** Writes each feed whose content changed since it last wrote it (the user's removed once revoked). */
  sync(): Promise<void>;
  stop(): void;
}

/**
 * Keeps every public feed and `user`'s in `dir` (`codeforces.ics` … `leetcode.ics`, `all.ics`,
 * `<user>.ics`) as the door's builder rebuilds them: every `everyMs` it reads the feed objects the
 * door's bucket holds — the public ones, and the user's under its current token (the door table's
 * record, so a new feed URL is followed) — and writes a file again when its entity tag changed. A
 * calendar app that opens the file sees what the API serves at that moment.
 */
export function followCalendars(options: {
  door: Pick<LocalDoor, 'objects'>;
  feeds: Pick<DoorTable, 'userFeed'>;
  dir: string;
  user: string;
  /** @default 1000 */
  everyMs?: number;
}): CalendarFollower {
  const files = {
    public: Object.fromEntries(PUBLIC_FEEDS.map((feed) => [feed, join(options.dir, `${feed}.ics`)])) as Record<PublicFeed, string>,
    user: join(options.dir, `${options.user}.ics`),
  };
  const written = new Map<string, string>();
  const write = (file: string, object: { body: Buffer; etag: string } | undefined): void => {
    if (object === undefined) {
      if (written.delete(file)) rmSync(file, { force: true });
      return;
    }
    if (written.get(file) === object.etag) return;
    writeFileSync(file, object.body);
    written.set(file, object.etag);
  };
  const objectOf = (key: string) => options.door.objects.objects.get(`${FEED_BUCKET}/${key}`);
  let pending: Promise<void> = Promise.resolve();
  const sync = (): Promise<void> => {
    pending = pending.then(async () => {
      mkdirSync(options.dir, { recursive: true });
      for (const feed of PUBLIC_FEEDS) write(files.public[feed], objectOf(FEED_OBJECTS.public(feed)));
      const feed = await options.feeds.userFeed(options.user);
      write(files.user, feed === undefined ? undefined : objectOf(FEED_OBJECTS.user(feed.hash)));
    });
    return pending;
  };
  const timer = setInterval(() => void sync().catch(() => undefined), options.everyMs ?? 1_000);
  timer.unref();
  return { files, sync, stop: () => clearInterval(timer) };
}

/**
 * The commands a person can try, in an order that works when followed line by line: the feed URL
 * is read before `POST /me/calendar` replaces it. README.md shows these very lines, with its own
 * token, contest and feed URL (test/local/walkthrough.test.ts compares them).
 */
export function doorCommands(v: { url: string; token: string; contest: string; feedUrl: string }): string[] {
  return [
    `export TOKEN=${v.token}`,
    `curl -H "Authorization: Bearer $TOKEN" ${v.url}/me/reminders`,
    `curl -X PUT -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"minutesBefore":30}' ${v.url}/me/reminders/${v.contest}`,
    `curl -H "Authorization: Bearer $TOKEN" '${v.url}/contests?limit=3'     # every platform's, soonest first; ?platform=atcoder: one platform's`,
    `curl ${v.url}/calendar/all.ics     # the public feed of every platform; /calendar/<platform>.ics: one (${PLATFORMS.join(', ')})`,
    `curl ${v.feedUrl}     # ${DEMO_USER}'s feed, its reminders as alarms`,
    `curl -X POST -H "Authorization: Bearer $TOKEN" ${v.url}/me/calendar     # a new feed URL: the one above answers 404 from now on`,
    `curl ${v.url}/me/reminders     # no token: 401, as API Gateway answers`,
  ];
}

/** What a person can do now the API serves: the token and the commands against this run. */
export function doorInstructions(door: Pick<LocalDoor, 'url'>, token: string, contest: string, feedUrl: string): string {
  return [
    `\nThe app's door: the HTTP API at ${door.url} (docs/api.md), as user ${DEMO_USER}; try, in this order:`,
    ...doorCommands({ url: door.url, token, contest, feedUrl }).map((line) => `  ${line}`),
  ].join('\n');
}

/**
 * The lead that makes a reminder on a contest starting at `startTimeSeconds` due at `nowSeconds`:
 * the whole minutes until its start, at least one. How `npm start` makes a reminder due locally
 * without waiting: the reminder's due time is the start minus its lead, so it is due now.
 */
export function dueNowLead(startTimeSeconds: number, nowSeconds: number): number {
  return Math.max(1, Math.ceil((startTimeSeconds - nowSeconds) / 60));
}
