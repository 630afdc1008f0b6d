/**
 * The app's door on this machine as `npm start` serves it (local/door/): the HTTP API's deployed
 * bundle behind the local API Gateway and its JWT authorizer, the feeds built from the events of
 * a real sync, the webhooks verified by the example receiver; and the README's curl flow through
 * it: a token, PUT /me/reminders/{id}, GET /me/reminders, a feed URL, the feed read by an
 * independent iCalendar parser.
 */
import { dirname } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { deliverOutbox } from '../../local/local-events.js';
import { startLocalDoor, type LocalDoor } from '../../local/door/door.js';
import { callApi, dueNowLead } from '../../local/door/walkthrough.js';
import { functionEnv } from '../../local/local-events.js';
import { startOfflineSources, syncSources, upcomingContests, type OfflineSources } from '../../local/sync-sources.js';
import type { TableNames } from '../../local/tables.js';
import { findDeliveryFunction, type CfnTemplate } from '../../local/template.js';
import { createDeliveryHandler } from '../../lambda/delivery/handler.js';
import { parseFeed } from '../lambda/calendar/ics.js';
import { localHandler } from '../support/handler.js';
import { synthesizedTemplate } from '../support/tables.js';
import { useWorld, type World } from '../support/world.js';

let world: World;
let door: LocalDoor | undefined;
let offline: OfflineSources | undefined;
useWorld('door', (w) => (world = w));
afterEach(async () => {
  await door?.close();
  door = undefined;
  await offline?.close();
  offline = undefined;
});

/** A synced world behind the local door, its contest events delivered (feeds and webhooks). */
async function syncedDoor(): Promise<LocalDoor> {
  const { summary, error } = await localHandler(world.tables, world.standin.baseUrl).invoke({});
  expect(summary?.outcome, `the sync before the door: ${JSON.stringify(summary ?? error?.message)}`).toBe('succeeded');
  const template = synthesizedTemplate();
  const names = world.tables.names as TableNames;
  const endpoint = inject('dynamoEndpoint');
  door = await startLocalDoor({ template, outdir: dirname(inject('templatePath')), dynamoEndpoint: endpoint, names, port: 0 });
  await deliverOutbox({ template, dynamo: localDynamoClient(endpoint), endpoint, names, more: door.bus });
  await door.settled();
  return door;
}

const reminderRows = async () => (await world.tables.doc.send(new ScanCommand({ TableName: world.tables.names.reminders }))).Items ?? [];

describe('the local door (npm start)', () => {
  it("answers the README's curl flow: token, set, list, feed URL, the feed with the reminder as an alarm", async () => {
    const door = await syncedDoor();
    const token = await door.issuer.token('alice');

    const set = await callApi(door, token, 'PUT', '/me/reminders/codeforces:2101', { minutesBefore: 30 });
    expect([set.status, set.body.changed, set.body.reminder.state]).toEqual([200, true, 'scheduled']);
    const again = await callApi(door, token, 'PUT', '/me/reminders/codeforces:2101', { minutesBefore: 30 });
    expect([again.status, again.body.changed]).toEqual([200, false]);
    const list = await callApi(door, token, 'GET', '/me/reminders');
    expect(list.body.reminders.map((r: { contestId: string; minutesBefore: number }) => [r.contestId, r.minutesBefore])).toEqual([
      ['codeforces:2101', 30],
    ]);

    const created = await callApi(door, token, 'POST', '/me/calendar');
    expect(created.status).toBe(201);
    expect(created.body.url).toMatch(new RegExp(`^${door.url}/calendar/u/[A-Za-z0-9_-]{43}\\.ics$`));
    await door.settled();
    const feed = await fetch(created.body.url);
    expect(feed.headers.get('content-type')).toContain('text/calendar');
    const events = parseFeed(await feed.text()).events;
    expect(events.map((e) => [e.uid, e.alarms])).toEqual([['codeforces-2101@contest-sync', [-1800]]]);
    const unchanged = await fetch(created.body.url, { headers: { 'if-none-match': feed.headers.get('etag')! } });
    expect(unchanged.status).toBe(304);

    // Revoked: the URL is gone at once, answered like one that never existed.
    expect((await callApi(door, token, 'DELETE', '/me/calendar')).status).toBe(204);
    const gone = await fetch(created.body.url);
    expect([gone.status, ((await gone.json()) as { error: { code: string } }).error.code]).toEqual([404, 'feed-not-found']);
  });

  it('serves the public feed of what was published, and delivers every event as a verified webhook', async () => {
    const door = await syncedDoor();
    const feed = await fetch(`${door.url}/calendar/codeforces.ics`);
    const uids = parseFeed(await feed.text()).events.map((e) => e.uid);
    const announced = door.webhooks.filter((e) => e['detail-type'] === 'ContestAnnounced');
    expect(announced.length).toBeGreaterThan(0);
    // The UID is the platform and its own id: a Codeforces contest's is what it always was.
    expect(uids.sort()).toEqual(announced.map((e) => `${String(e.detail.platform)}-${String(e.detail.platformId)}@contest-sync`).sort());
    for (const uid of uids) expect(uid).toMatch(/^codeforces-[1-9][0-9]*@contest-sync$/);
    for (const e of announced) expect(e.detail.contestId).toBe(`codeforces:${String(e.detail.platformId)}`);

    // The feed of every platform holds the same events (only Codeforces was synced); a platform that published nothing yet has no feed.
    const all = await fetch(`${door.url}/calendar/all.ics`);
    expect([all.status, all.headers.get('content-type')]).toEqual([200, 'text/calendar; charset=utf-8']);
    expect(
      parseFeed(await all.text())
        .events.map((e) => e.uid)
        .sort(),
    ).toEqual(uids);
    const atcoder = await fetch(`${door.url}/calendar/atcoder.ics`);
    expect([atcoder.status, ((await atcoder.json()) as { error: { code: string } }).error.code]).toEqual([404, 'feed-not-found']);
  });

  it('lists every platform’s contests when no platform is asked for, in start order, paged by its cursor', async () => {
    const door = await syncedDoor();
    const token = await door.issuer.token('alice');
    const seen: { id: string; startTimeSeconds: number }[] = [];
    let cursor: string | undefined;
    do {
      const page = await callApi(door, token, 'GET', `/contests?limit=2${cursor === undefined ? '' : `&cursor=${cursor}`}`);
      expect(page.status).toBe(200);
      seen.push(...(page.body.contests as { id: string; startTimeSeconds: number }[]));
      cursor = page.body.cursor as string | undefined;
    } while (cursor !== undefined);
    const one = await callApi(door, token, 'GET', '/contests?platform=codeforces&limit=100');
    expect(seen.map((c) => c.id)).toEqual((one.body.contests as { id: string }[]).map((c) => c.id));
    expect(seen.length).toBeGreaterThan(0);
    const starts = seen.map((c) => c.startTimeSeconds);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    const bad = await callApi(door, token, 'GET', '/contests?platform=topcoder');
    expect([bad.status, bad.body.error.code, bad.body.error.fields]).toEqual([400, 'invalid-input', ['platform']]);
  });

  it("refuses as API Gateway's authorizer does, before the function: no token, a forged, expired, other issuer's or other audience's; nothing written", async () => {
    const door = await syncedDoor();
    const put = (token?: string) => callApi(door, token, 'PUT', '/me/reminders/codeforces:2101', { minutesBefore: 30 });
    const forged = `${(await door.issuer.token('alice')).slice(0, -4)}AAAA`;
    const otherIssuer = await door.issuer.token('alice', 3600, { issuer: 'https://elsewhere.example' });
    const otherAudience = await door.issuer.token('alice', 3600, { audience: 'another-app' });
    for (const token of [undefined, 'not-a-jwt', forged, await door.issuer.token('alice', -60), otherIssuer, otherAudience]) {
      expect(await put(token)).toEqual({ status: 401, body: { message: 'Unauthorized' } });
    }
    expect(await reminderRows()).toEqual([]);
    const open = await callApi(door, undefined, 'GET', '/openapi.json');
    expect(open.status).toBe(200);
  });

  it("refuses a sub that is no user id (a lone surrogate) on every route, before any write: it never reaches user ?'s feed", async () => {
    const door = await syncedDoor();
    const question = await door.issuer.token('?');
    expect((await callApi(door, question, 'POST', '/me/calendar')).status).toBe(201);
    const doorItems = async () =>
      (await world.tables.doc.send(new ScanCommand({ TableName: (world.tables.names as TableNames).door! }))).Items ?? [];
    const before = await doorItems();
    const lone = await door.issuer.token('\ud800');
    for (const [method, path] of [
      ['GET', '/me/calendar'],
      ['POST', '/me/calendar'],
      ['DELETE', '/me/calendar'],
      ['GET', '/me/reminders'],
    ] as const) {
      const answer = await callApi(door, lone, method, path);
      expect([method, path, answer.status, answer.body.error?.code]).toEqual([method, path, 401, 'unauthorized']);
    }
    expect(await doorItems()).toEqual(before);
    expect((await callApi(door, question, 'GET', '/me/calendar')).body.active).toBe(true);
  });
});

describe('the local door with every platform synced from its recorded reply (npm start -- --offline)', () => {
  it('delivers a due AtCoder reminder as exactly one signed ReminderDue webhook, and AtCoder announcements as webhooks of atcoder', async () => {
    const template = synthesizedTemplate() as CfnTemplate;
    const names = world.tables.names as TableNames;
    const endpoint = inject('dynamoEndpoint');
    const client = localDynamoClient(endpoint);
    offline = await startOfflineSources(Date.now());
    door = await startLocalDoor({ template, outdir: dirname(inject('templatePath')), dynamoEndpoint: endpoint, names, port: 0 });
    const runs = await syncSources({
      template,
      names,
      client,
      event: {},
      env: { ...offline.env, LEASE_DURATION_SECONDS: '30' },
      write: () => undefined,
    });
    expect(runs.map((r) => [r.job.platform, r.summary.outcome])).toEqual(runs.map((r) => [r.job.platform, 'succeeded']));
    expect(runs.map((r) => r.job.platform)).toContain('atcoder');

    const now = Math.floor(Date.now() / 1000);
    const atcoder = await upcomingContests(client, names, 'atcoder', now);
    expect(atcoder.length).toBeGreaterThan(0);
    const next = atcoder[0]!;
    const contestId = String(next.contestId);
    const platformId = contestId.replace(/^atcoder:/, '');
    expect(contestId).toMatch(/^atcoder:[a-z0-9_-]+$/);

    // As npm start makes a reminder due: the lead that puts its due time now (local/door/walkthrough.ts).
    const token = await door.issuer.token('alice');
    const minutesBefore = dueNowLead(Number(next.startTimeSeconds), now);
    const set = await callApi(door, token, 'PUT', `/me/reminders/${contestId}`, { minutesBefore });
    expect([set.status, set.body.changed]).toEqual([200, true]);
    const delivery = createDeliveryHandler({
      env: { ...functionEnv(template, findDeliveryFunction(template).logicalId, names), LEASE_DURATION_SECONDS: '30' },
      dynamo: client,
      write: () => undefined,
    });
    const delivered = await delivery({}, { getRemainingTimeInMillis: () => 60_000 });
    expect(JSON.stringify(delivered)).toMatch(/"delivered":1[,}]/);
    await deliverOutbox({ template, dynamo: client, endpoint, names, more: door.bus });
    await door.settled();

    // What the example receiver verified (signature, then timestamp) and handled once per webhook-id.
    const due = door.webhooks.filter((e) => e['detail-type'] === 'ReminderDue');
    expect(due).toHaveLength(1);
    expect(due[0]!.detail).toMatchObject({
      platform: 'atcoder',
      contestId,
      contest: contestId,
      platformId,
      userId: 'alice',
      minutesBefore,
    });
    const announced = door.webhooks.filter((e) => e['detail-type'] === 'ContestAnnounced' && e.detail.platform === 'atcoder');
    expect(announced.map((e) => String(e.detail.contestId)).sort()).toEqual(atcoder.map((c) => String(c.contestId)).sort());
    for (const e of announced) expect(e.detail.contestId).toBe(`atcoder:${String(e.detail.platformId)}`);
    // Every platform's contest events arrive, each as its own platform's.
    const platforms = new Set(door.webhooks.filter((e) => e['detail-type'] === 'ContestAnnounced').map((e) => e.detail.platform));
    expect([...platforms].sort()).toEqual(runs.map((r) => r.job.platform).sort());

    // The receiver accepts only what the relay signed: the same event unsigned, or signed by another secret, is refused.
    const body = JSON.stringify(due[0]);
    const headers = {
      'content-type': 'application/json',
      'webhook-id': String(due[0]!.detail.eventId),
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    };
    const unsigned = await fetch(door.receiverUrl, { method: 'POST', headers, body });
    const forged = await fetch(door.receiverUrl, {
      method: 'POST',
      headers: { ...headers, 'webhook-signature': `v1,${Buffer.from('not the secret').toString('base64')}` },
      body,
    });
    expect([unsigned.status, forged.status]).toEqual([401, 401]);
    expect(door.webhooks.filter((e) => e['detail-type'] === 'ReminderDue')).toHaveLength(1);
  });
});
