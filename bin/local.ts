#!/usr/bin/env node
/**
 * `npm start`: one real sync on this machine, no AWS account needed. Starts DynamoDB Local in
 * memory, creates the tables from the synthesized CloudFormation template, invokes the handler
 * and prints what it did and the upcoming contests (read through the app's GSI). Then the app
 * sets a reminder due now on the next contest, the reminder delivery job runs once, and the
 * outbox is delivered as deployed (stream, relay, bus, a consumer that dedupes on
 * detail.eventId): it prints the events the app receives (docs/events.md). The app's door runs
 * too (local/door/, docs/api.md): the HTTP API's bundle behind a local API Gateway with a JWT
 * authorizer for a local issuer — the reminder is set through it —, the calendar feeds (written
 * to .local/calendar/), and the signed webhooks, verified by the example receiver. Then it serves
 * the API until Ctrl-C, having printed a token and the curl commands to try.
 *
 *   npm start                         sync every platform (Codeforces, AtCoder, CodeChef, LeetCode) from the real sites
 *   npm start -- --offline            sync every platform from its recorded reply served locally
 *   npm start -- --persist            keep the database in .local/dynamodb: the next run syncs
 *                                     against what this one wrote; `npm run status -- --local` reads it
 *   npm start -- --event '{"dryRun":true}'   any console payload
 *   npm start -- --verbose            also print the function's JSON logs and EMF metrics
 *   npm start -- --no-events          only the sync: no reminder, no delivery
 *   npm start -- --port 3100          the API's port (default 3100)
 *   npm start -- --no-serve           exit once the walk-through is printed
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { OfflineSources } from '../local/sync-sources.js';
import type { LocalDoor } from '../local/door/door.js';
import { parseCommandLine, refuse } from '../cli/args.js';
import { freePortFrom, isPortInUse, portInUse } from '../cli/ports.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.CDK_DISABLE_CLI_TELEMETRY ??= 'true';

/** The API's port when none is given (local/door/door.ts DEFAULT_PORT: the README's commands use it). */
const DEFAULT_PORT = 3100;

const COMMAND = {
  command: 'npm start',
  npmScript: 'start',
  synopsis: '-- [--offline] [--persist] [--event JSON] [--verbose] [--no-events] [--port N] [--no-serve]',
  help: [
    '--offline     sync every platform from its recorded reply served locally (no network)',
    '--persist     keep the database in .local/dynamodb (a second run syncs against it)',
    '--event JSON  the payload the sync is invoked with (any console test event)',
    "--verbose     also print the functions' JSON logs, EMF metrics and each API request",
    '--no-events   only the sync: no reminder, no delivery, no events, no webhooks',
    `--port N      the local HTTP API's port (default ${DEFAULT_PORT}; 0: any free port)`,
    '--no-serve    exit after the walk-through instead of serving the API until Ctrl-C',
  ],
  options: {
    offline: { type: 'boolean', default: false },
    persist: { type: 'boolean', default: false },
    event: { type: 'string', default: '{}' },
    verbose: { type: 'boolean', default: false },
    'no-events': { type: 'boolean', default: false },
    port: { type: 'string', default: String(DEFAULT_PORT) },
    'no-serve': { type: 'boolean', default: false },
  },
} as const;

// Every mistake is answered here, before DynamoDB Local starts or the app is synthesized.
const values = parseCommandLine(COMMAND);
const port = Number(values.port);
if (!/^\d+$/.test(values.port) || port > 65_535) refuse(COMMAND, `--port takes a port number (0 to 65535), got ${values.port}`);
let event: unknown;
try {
  event = JSON.parse(values.event);
} catch (error) {
  refuse(COMMAND, `--event is not JSON (${(error as Error).message}): e.g. --event '{"dryRun":true}'`);
}
// The sync's own parser: an event it would refuse is refused here, not after the tables are made.
const { parseEvent } = await import('../lambda/sync/invocation.js');
try {
  parseEvent(event);
} catch (error) {
  refuse(COMMAND, `--event is not an event the sync takes: ${(error as Error).message}`);
}
if (port !== 0 && (await portInUse(port))) {
  const free = await freePortFrom(port + 1);
  process.stderr.write(`npm start: port ${port} is in use (another npm start?): stop it, or run npm start -- --port ${free}\n`);
  process.exit(2);
}
if (!values.verbose) process.env.POWERTOOLS_METRICS_DISABLED = 'true';

// The product and the CDK app load once the command line is known to be good.
const { DynamoDBDocumentClient } = await import('@aws-sdk/lib-dynamodb');
const { createDeliveryHandler } = await import('../lambda/delivery/handler.js');
const { SOURCE_JOBS } = await import('../lambda/sources/jobs.js');
const { startOfflineSources, syncSources, upcomingContests } = await import('../local/sync-sources.js');
const { PERSIST_DIR, startDynamoDbLocal } = await import('../local/dynamodb-local.js');
const { createTablesFromTemplate } = await import('../local/tables.js');
const { deliverOutbox, functionEnv } = await import('../local/local-events.js');
const { startLocalDoor } = await import('../local/door/door.js');
const { DEMO_USER, callApi, createFeed, doorInstructions, dueNowLead, followCalendars } = await import('../local/door/walkthrough.js');
const { dynamoDoorTable } = await import('../lambda/calendar/store.js');
const { findDeliveryFunction, synthTemplate } = await import('../local/template.js');

const step = (text: string) => console.log(`• ${text}`);

/** Online, a platform's origin given in its job's variable (as the deployed function reads it: docs/sources.md) replaces the real one. */
const origins: Record<string, string> = Object.fromEntries(
  SOURCE_JOBS.flatMap((job) => (process.env[job.baseUrlVariable] ? [[job.baseUrlVariable, process.env[job.baseUrlVariable]!]] : [])),
);

/**
 * The recorded reply is shifted so that its upcoming contests stay upcoming. With --persist the
 * shift is fixed when the database is created (kept next to it), so a second run gets the very
 * same list and writes nothing; in memory, each run shifts to its own start.
 */
function offlineAnchorMs(): number {
  if (!values.persist) return Date.now();
  const file = join(PERSIST_DIR, 'offline-anchor.json');
  if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { anchorMs: number }).anchorMs;
  const anchorMs = Date.now();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ anchorMs })}\n`);
  return anchorMs;
}

/** The port was taken between the check above and the API's start: the same one line. */
async function portTaken(): Promise<never> {
  process.stderr.write(
    `npm start: port ${port} is in use: stop what holds it, or run npm start -- --port ${await freePortFrom(port + 1)}\n`,
  );
  await shutdown();
  process.exit(2);
}

const dynamo = await startDynamoDbLocal(values.persist ? { path: PERSIST_DIR } : {}).catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
let offline: OfflineSources | undefined;
let door: LocalDoor | undefined;
let exitCode = 0;
let serving = false;
/** Stops what this run started (the synthesized app's temporary directory goes as the process exits: local/template.ts). */
async function shutdown(): Promise<void> {
  await door?.close();
  await offline?.close();
  await dynamo.stop();
}
// Ctrl-C while serving ends the wait below; before that, it stops what was started and exits.
const interrupted = new Promise<void>((resolve) => ['SIGINT', 'SIGTERM'].forEach((signal) => process.once(signal, () => resolve())));
void interrupted.then(async () => {
  if (serving) return;
  console.error('\nnpm start: interrupted; stopping DynamoDB Local');
  await shutdown();
  process.exit(130);
});
// EventBridge's `time` has whole seconds: the events of this run are those committed since.
const startedAt = Math.floor(Date.now() / 1000) * 1000;
try {
  const where = values.persist ? `persisted in ${relative(process.cwd(), PERSIST_DIR) || PERSIST_DIR}` : 'in memory';
  step(`DynamoDB Local (${where}) on ${dynamo.endpoint}`);
  // With the functions' bundles: the HTTP API runs as deployed.
  const { template, outdir } = await synthTemplate({ bundle: true });
  const client = dynamo.client();
  const names = await createTablesFromTemplate(client, template, 'local', { existing: values.persist ? 'keep' : 'fail' });
  step(`tables from the synthesized template: ${Object.values(names).join(', ')}`);
  // Every source's job as deployed (its environment, its outbox), on the local tables.
  if (values.offline) {
    offline = await startOfflineSources(offlineAnchorMs());
    step(`offline: every platform's recorded reply served by local stand-ins (${Object.values(offline.env).join(', ')})`);
  } else {
    const at = (job: (typeof SOURCE_JOBS)[number]) =>
      origins[job.baseUrlVariable] === undefined ? '' : ` at ${origins[job.baseUrlVariable]}`;
    step(`the platforms themselves: ${SOURCE_JOBS.map((job) => `${job.label}${at(job)}`).join(', ')}`);
  }
  const runs = await syncSources({
    template,
    names,
    client,
    event,
    env: {
      ...(offline?.env ?? origins),
      LEASE_DURATION_SECONDS: '30',
      ...(values.verbose === true ? { POWERTOOLS_LOG_LEVEL: 'DEBUG' } : {}),
    },
    // The functions' JSON log lines and EMF metrics, shown with --verbose.
    write: (line) => {
      if (values.verbose === true) console.log(line);
    },
  });
  const now = Math.floor(Date.now() / 1000);
  const upcomingItems: Record<string, unknown>[] = [];
  for (const { job, summary } of runs) {
    console.log(`\n${job.label} sync summary`);
    console.log(JSON.stringify(summary, null, 2));
    if (summary.outcome === 'failed') {
      exitCode = 1;
      if (summary.reason === job.platform && !values.offline) {
        console.log(
          `\n${job.label} could not be reached or answered badly from this machine (${summary.error}).\n` +
            'Run `npm start -- --offline` to sync from recorded replies served by local stand-ins.',
        );
      }
    }
    const items = await upcomingContests(client, names, job.platform, now);
    upcomingItems.push(...items);
    const rows = items.map((item) => ({
      id: item.contestId,
      starts: new Date(Number(item.startTimeSeconds) * 1000).toISOString().replace('T', ' ').slice(0, 16) + ' UTC',
      length: `${Math.floor(Number(item.durationSeconds) / 3600)}h${String(Math.floor((Number(item.durationSeconds) % 3600) / 60)).padStart(2, '0')}`,
      phase: item.phase,
      name: item.name,
    }));
    console.log(`\nUpcoming ${job.label} contests (${rows.length}), from the Contests table's byPlatformStart index`);
    if (rows.length > 0) console.table(rows);
  }
  if (exitCode !== 0) {
    // Nothing is served after a failed sync: the door never opens; no token, no commands for a server that is not running.
    const failed = runs.filter(({ summary }) => summary.outcome === 'failed').map(({ job }) => job.label);
    const instead = values.offline ? '' : ', or run npm start -- --offline';
    process.stderr.write(
      `npm start: the sync of ${failed.join(', ')} failed (its summary above): nothing is served; fix that first${instead}\n`,
    );
  } else {
    // The door opens once every sync succeeded.
    const opened: LocalDoor = await startLocalDoor({
      template,
      outdir,
      dynamoEndpoint: dynamo.endpoint,
      names,
      port,
      ...(values.verbose === true ? { log: (line: string) => console.log(line.trimEnd()) } : {}),
    }).catch((error: unknown) => (isPortInUse(error) ? portTaken() : Promise.reject(error as Error)));
    door = opened;
    const token = await door.issuer.token(DEMO_USER);
    step(`the HTTP API's bundle behind a local API Gateway at ${door.url} (JWT authorizer: a local issuer)`);
    const first = upcomingItems[0];
    if (!values['no-events'] && first !== undefined) await eventsOfTheRun(first, token);
    await theDoor(first === undefined ? undefined : String(first.contestId), token);
  }

  /**
   * The app sets a reminder due now on the next contest; the delivery job (shard 0, its
   * environment from the template) claims it; the outbox goes out through the stream, the relay
   * and the bus to a consumer that dedupes: what the app receives.
   */
  async function eventsOfTheRun(next: Record<string, unknown>, token: string): Promise<void> {
    const contest = { contestId: String(next.contestId), startTimeSeconds: Number(next.startTimeSeconds) };
    const id = contest.contestId;
    // A persisted run's user already has this reminder: setting its lead again is the same intent and changes nothing.
    const listed = await callApi(door!, token, 'GET', '/me/reminders');
    const stored = (listed.body.reminders as { contestId: string; minutesBefore: number }[]).find((r) => r.contestId === id);
    const minutesBefore = stored?.minutesBefore ?? dueNowLead(contest.startTimeSeconds, now);
    const set = await callApi(door!, token, 'PUT', `/me/reminders/${id}`, { minutesBefore });
    console.log(
      `\nThe app sets a reminder through the API (PUT /me/reminders/${id}, ${minutesBefore} minutes before its start: due now): ` +
        `${set.status} ${JSON.stringify(set.body)}`,
    );
    const delivery = createDeliveryHandler({
      env: { ...functionEnv(template, findDeliveryFunction(template).logicalId, names), LEASE_DURATION_SECONDS: '30' },
      dynamo: client,
      write: () => undefined,
    });
    const delivered = await delivery({}, { getRemainingTimeInMillis: () => 60_000 });
    console.log(`Reminder delivery: ${JSON.stringify(delivered)}`);
    const received = await deliverOutbox({
      template,
      dynamo: client,
      endpoint: dynamo.endpoint,
      names,
      sinceMs: startedAt,
      more: door!.bus,
    });
    await door!.settled();
    const earlier = received.earlier > 0 ? `; ${received.earlier} of earlier runs not shown` : '';
    console.log(
      `\nEvents the app received (${received.events.length}; ${received.duplicates} duplicate deliveries dropped on detail.eventId${earlier})`,
    );
    if (received.events.length > 0) {
      console.table(
        received.events.map((e) => ({
          source: e.source,
          'detail-type': e['detail-type'],
          contest: e.detail.contestId,
          user: e.detail.userId ?? '',
          start: new Date(Number(e.detail.startTimeSeconds) * 1000).toISOString().replace('T', ' ').slice(0, 16) + ' UTC',
          eventId: String(e.detail.eventId),
        })),
      );
    }
  }

  /** The webhooks the example receiver verified, the calendar files, and — while it serves — what to try. */
  async function theDoor(contest: string | undefined, token: string): Promise<void> {
    // The stream keeps earlier runs' events (with --persist): those were shown by their own run.
    const received = door!.webhooks.filter((e) => Date.parse(e.time) >= startedAt);
    if (received.length > 0) {
      console.log(`\nWebhooks the example receiver verified (${received.length}; examples/webhook-receiver, Standard Webhooks signatures)`);
      console.table(received.map((e) => ({ 'webhook-id': String(e.detail.eventId), type: e['detail-type'], contest: e.detail.contest })));
    }
    const feedUrl = await createFeed(door!, token);
    const follower = followCalendars({
      door: door!,
      feeds: dynamoDoorTable(DynamoDBDocumentClient.from(client), names.door!),
      dir: join(dirname(PERSIST_DIR), 'calendar'),
      user: DEMO_USER,
    });
    await follower.sync();
    const files = [...Object.values(follower.files.public), follower.files.user].map((f) => relative(process.cwd(), f)).join(', ');
    if (values['no-serve']) {
      follower.stop();
      console.log(`\nCalendar files (every public feed and ${DEMO_USER}'s, as the API served them): ${files}`);
      console.log('The API stopped with this run (--no-serve): npm start -- --offline serves it, with the commands to try, until Ctrl-C.');
      return;
    }
    console.log(
      `\nCalendar files to open (every public feed and ${DEMO_USER}'s), rewritten as the feeds change while the API serves: ${files}`,
    );
    console.log(doorInstructions(door!, token, contest ?? 'codeforces:2120', feedUrl));
  }

  if (values.persist)
    console.log('\nKept in the persisted database: run `npm start -- --offline --persist` again, or `npm run status -- --local`.');
  if (!values['no-serve'] && door !== undefined) {
    console.log(`\nServing the API at ${door.url} until Ctrl-C.`);
    serving = true;
    await interrupted;
  }
} finally {
  await shutdown();
}
process.exit(exitCode);
