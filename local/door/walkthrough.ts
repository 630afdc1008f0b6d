/**
 * What `npm start` does at the door, step by step, as an app would: set a reminder through the
 * API with the demo user's token, then ask for the user's calendar feed and write both feeds to
 * disk; and what it prints for a person to try (the token, the curl commands, the feed URLs).
 * README.md, "The app's door, locally".
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalDoor } from './door.js';

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

/** The user's feed URL (`POST /me/calendar`), then both feeds fetched through the API and written to `dir`. */
export async function writeCalendars(door: LocalDoor, token: string, dir: string): Promise<{ feedUrl: string; files: string[] }> {
  const created = await callApi(door, token, 'POST', '/me/calendar');
  if (created.status !== 201) throw new Error(`POST /me/calendar answered ${created.status}: ${JSON.stringify(created.body)}`);
  await door.settled();
  const feedUrl = String(created.body.url);
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (const [name, url] of [
    ['codeforces.ics', `${door.url}/calendar/codeforces.ics`],
    [`${DEMO_USER}.ics`, feedUrl],
  ] as const) {
    const answer = await fetch(url);
    if (answer.status !== 200) continue;
    const file = join(dir, name);
    writeFileSync(file, await answer.text());
    files.push(file);
  }
  return { feedUrl, files };
}

/** What a person can do now: the token and the README's curl commands against this run. */
export function doorInstructions(door: LocalDoor, token: string, contest: string, feedUrl: string): string {
  return [
    `\nThe app's door: the HTTP API at ${door.url} (docs/api.md), as user ${DEMO_USER}:`,
    `  export TOKEN=${token}`,
    `  curl -H "Authorization: Bearer $TOKEN" ${door.url}/me/reminders`,
    `  curl -X PUT -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"minutesBefore":30}' ${door.url}/me/reminders/${contest}`,
    `  curl -H "Authorization: Bearer $TOKEN" '${door.url}/contests?limit=3'`,
    `  curl -X POST -H "Authorization: Bearer $TOKEN" ${door.url}/me/calendar     # a new feed URL (the previous one stops working)`,
    `  curl ${door.url}/calendar/codeforces.ics`,
    `  curl ${feedUrl}`,
    `  curl ${door.url}/me/reminders     # no token: 401, as API Gateway answers`,
  ].join('\n');
}
