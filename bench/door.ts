/**
 * The door's section of `npm run bench` (docs/performance.md, "The app's door"): the HTTP API
 * bundle's cold import, the requests one API call makes by route — DynamoDB counted on the wire by
 * the proxy (the API function's alone: the feed builder reaches DynamoDB Local directly and runs
 * only after the call's requests are read), S3 by the bucket stand-in, SQS by the queue stand-in —
 * and what an unchanged feed poll costs. The API runs as `npm start` runs it: the deployed bundle
 * in a warm child process behind the local API Gateway (local/door/).
 */
import { performance } from 'node:perf_hooks';
import { createHandler } from '../lambda/sources/codeforces/handler.js';
import { startCodeforcesStandin, recordedContestList } from '../local/codeforces-standin.js';
import { apiFunctionId, startLocalDoor, type LocalDoor } from '../local/door/door.js';
import { callApi } from '../local/door/walkthrough.js';
import { deliverOutbox, functionEnv } from '../local/local-events.js';
import { PRICES } from '../local/prices.js';
import { bundleDirOfFunction, findSyncFunction } from '../local/template.js';
import { measureBundle, type BundleResult } from './bundle.js';
import type { BenchEnvironment } from './environment.js';
import { lambdaContext } from './handlers.js';
import { median, round, sortedCounts } from './stats.js';

/** Prices the door adds to local/prices.ts (us-east-1 list prices, same date). */
export const DOOR_PRICES = { httpApiRequestPerMillion: 1.0, s3GetPerMillion: 0.4 } as const;
/** The API function's memory (lib/constructs/door.ts). */
const API_MEMORY_GB = 0.25;
const POLLS = 25;

export interface RouteRequests {
  call: string;
  status: number;
  dynamodb: Record<string, number>;
  s3: Record<string, number>;
  sqsMessages: number;
}

export interface DoorResult {
  bundle: BundleResult;
  routes: RouteRequests[];
  unchangedPoll: { dynamodbRequests: number; s3Gets: number; medianMs: number; costPerMillionUsd: number; costLines: string[] };
}

/** One call, its requests counted: the feed queue held so that the builder's work is not the call's. */
async function counted(
  env: BenchEnvironment,
  door: LocalDoor,
  call: () => Promise<{ status: number }>,
  name: string,
): Promise<RouteRequests> {
  door.queue.hold(true);
  env.proxy.reset();
  door.objects.requests.clear();
  const sentBefore = door.queue.sent;
  const { status } = await call();
  const result = {
    call: name,
    status,
    dynamodb: sortedCounts(env.proxy.counts),
    s3: sortedCounts(door.objects.requests),
    sqsMessages: door.queue.sent - sentBefore,
  };
  door.queue.hold(false);
  await door.settled();
  return result;
}

/** A synced world (the recorded list, its events delivered: the public feed built) behind the local door. */
async function syncedDoor(env: BenchEnvironment): Promise<{ door: LocalDoor; contestId: string }> {
  const names = await env.createTables('door');
  const standin = await startCodeforcesStandin({ contests: recordedContestList() });
  try {
    const sync = createHandler({
      env: {
        ...functionEnv(env.template, findSyncFunction(env.template).logicalId, names),
        CODEFORCES_API_URL: standin.baseUrl,
        LEASE_DURATION_SECONDS: '30',
        POWERTOOLS_LOG_LEVEL: 'ERROR',
      },
      dynamo: env.dynamo.client(),
      write: () => undefined,
    });
    await sync({}, lambdaContext());
  } finally {
    await standin.close();
  }
  const door = await startLocalDoor({
    template: env.template,
    outdir: env.outdir,
    dynamoEndpoint: env.proxy.endpoint,
    builderDynamoEndpoint: env.dynamo.endpoint,
    names,
    port: 0,
  });
  await deliverOutbox({ template: env.template, dynamo: env.dynamo.client(), endpoint: env.dynamo.endpoint, names, more: door.bus });
  await door.settled();
  const upcoming = await callApi(door, await door.issuer.token('bench-user'), 'GET', '/contests?limit=1');
  return { door, contestId: String(upcoming.body.contests[0].id) };
}

/** Each route once, in the order an app uses them. */
async function measureRoutes(
  env: BenchEnvironment,
  door: LocalDoor,
  contestId: string,
): Promise<{ routes: RouteRequests[]; feedUrl: string }> {
  const token = await door.issuer.token('bench-user');
  const api = (method: string, path: string, body?: unknown) => () => callApi(door, token, method, path, body);
  const reminder = `/me/reminders/${contestId}`;
  const routes: RouteRequests[] = [];
  routes.push(await counted(env, door, api('GET', '/contests'), 'GET /contests'));
  routes.push(await counted(env, door, api('GET', '/contests?platform=codeforces'), 'GET /contests?platform=codeforces'));
  routes.push(await counted(env, door, api('PUT', reminder, { minutesBefore: 30 }), 'PUT /me/reminders/{id} (new)'));
  routes.push(await counted(env, door, api('PUT', reminder, { minutesBefore: 30 }), 'PUT /me/reminders/{id} (the same again)'));
  routes.push(await counted(env, door, api('PUT', reminder, { minutesBefore: 60 }), 'PUT /me/reminders/{id} (changed)'));
  routes.push(await counted(env, door, api('GET', '/me/reminders'), 'GET /me/reminders'));
  let feedUrl = '';
  routes.push(
    await counted(
      env,
      door,
      async () => {
        const answer = await api('POST', '/me/calendar')();
        feedUrl = String(answer.body.url);
        return answer;
      },
      'POST /me/calendar',
    ),
  );
  routes.push(await counted(env, door, api('GET', '/me/calendar'), 'GET /me/calendar'));
  routes.push(await counted(env, door, () => fetch(feedUrl), 'GET /calendar/u/{token}.ics'));
  routes.push(await counted(env, door, () => fetch(`${door.url}/calendar/codeforces.ics`), 'GET /calendar/codeforces.ics'));
  routes.push(await counted(env, door, () => fetch(`${door.url}/calendar/all.ics`), 'GET /calendar/all.ics'));
  routes.push(await counted(env, door, api('DELETE', reminder), 'DELETE /me/reminders/{id}'));
  return { routes, feedUrl };
}

/** Polls of an unchanged feed with its ETag: requests, the median round trip, and the price per million. */
async function measurePoll(env: BenchEnvironment, door: LocalDoor, feedUrl: string): Promise<DoorResult['unchangedPoll']> {
  const etag = (await fetch(feedUrl)).headers.get('etag') ?? '';
  const poll = () => fetch(feedUrl, { headers: { 'if-none-match': etag } });
  const one = await counted(env, door, poll, 'poll');
  if (one.status !== 304) throw new Error(`an unchanged poll answered ${one.status}, not 304`);
  const samples: number[] = [];
  for (let i = 0; i < POLLS; i += 1) {
    const t = performance.now();
    await poll();
    samples.push(performance.now() - t);
  }
  const medianMs = round(median(samples), 1);
  const gbSeconds = API_MEMORY_GB * (Math.ceil(medianMs) / 1000);
  const parts = {
    gateway: DOOR_PRICES.httpApiRequestPerMillion,
    lambda: PRICES.lambdaRequestPerMillion + gbSeconds * 1e6 * PRICES.lambdaArmGbSecond,
    s3: (one.s3.GET ?? 0) * DOOR_PRICES.s3GetPerMillion,
  };
  return {
    dynamodbRequests: Object.values(one.dynamodb).reduce((sum, n) => sum + n, 0),
    s3Gets: one.s3.GET ?? 0,
    medianMs,
    costPerMillionUsd: round(parts.gateway + parts.lambda + parts.s3, 2),
    costLines: [
      `gateway $${parts.gateway.toFixed(2)}`,
      `Lambda $${parts.lambda.toFixed(2)} (${Math.ceil(medianMs)} ms billed at 256 MB)`,
      `S3 GET $${parts.s3.toFixed(2)}`,
    ],
  };
}

export async function measureDoor(env: BenchEnvironment, progress: (text: string) => void, bundleRuns = 7): Promise<DoorResult> {
  const apiDir = bundleDirOfFunction(env.outdir, env.template, apiFunctionId(env.template));
  progress(`door: import time of ${apiDir}/index.mjs`);
  const bundle = await measureBundle(apiDir, env.nodeOptions, bundleRuns);
  progress('door: a synced world behind the local API Gateway; each route once, its requests counted');
  const { door, contestId } = await syncedDoor(env);
  try {
    const { routes, feedUrl } = await measureRoutes(env, door, contestId);
    progress(`door: ${POLLS} polls of an unchanged feed`);
    return { bundle, routes, unchangedPoll: await measurePoll(env, door, feedUrl) };
  } finally {
    await door.close();
  }
}

const counts = (c: Record<string, number>) =>
  Object.keys(c).length === 0
    ? 'none'
    : Object.entries(c)
        .map(([op, n]) => `${op} ${n}`)
        .join(', ');

export function renderDoor(door: DoorResult): string {
  const rows = door.routes.map((r) => `| ${r.call} | ${r.status} | ${counts(r.dynamodb)} | ${counts(r.s3)} | ${r.sqsMessages} |`);
  const p = door.unchangedPoll;
  return [
    "### The app's door",
    `HTTP API bundle: ${door.bundle.bytes} B; cold import ${door.bundle.importMs} ms median (${door.bundle.nodeOptions || 'no NODE_OPTIONS'}), ${door.bundle.importMsPlain} ms without NODE_OPTIONS.`,
    '',
    '| API call | status | DynamoDB requests | S3 requests | SQS messages |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `An unchanged feed poll (If-None-Match): ${p.dynamodbRequests} DynamoDB requests, ${p.s3Gets} S3 GET, ${p.medianMs} ms median round trip here; $${p.costPerMillionUsd.toFixed(2)} per million polls (${p.costLines.join(', ')}).`,
    '',
  ].join('\n');
}
