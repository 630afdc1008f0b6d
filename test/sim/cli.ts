/**
 * A simulated year of contest-sync (docs/simulation.md).
 *
 *   npm run simulate -- [--days N] [--seed S] [--broken NAME] [--glitches default|none|benign|harmful]
 *                       [--episode N] [--full-episodes] [--deliver-every MIN] [--run-idle-minutes]
 *                       [--notify-every MIN] [--skew S] [--no-fickle] [--trace ID[,ID…]] [--stop-after-day D] [--json]
 *
 * Starts DynamoDB Local, synthesizes the template (no bundling: the handler runs in-process through
 * `createHandler`, on a virtual clock), runs N days (default 365) of hourly intervals and prints the
 * report (`--json`: one JSON object). Exits 1 when the checker found a violation; a mistake on the
 * command line is answered in one line with the usage (`--help`), exit 2.
 */
import { setMaxListeners } from 'node:events';
import { parseCommandLine, refuse, wholeNumber } from '../../cli/args.js';
import type { SimReport } from './runner.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.CDK_DISABLE_CLI_TELEMETRY = 'true';
setMaxListeners(100);

const COMMAND = {
  command: 'npm run simulate',
  npmScript: 'simulate',
  synopsis:
    '-- [--days N] [--seed S] [--broken NAME] [--glitches default|none|benign|harmful] [--episode N] [--full-episodes] [--deliver-every MIN] [--run-idle-minutes] [--notify-every MIN] [--skew S] [--no-fickle] [--trace ID[,ID…]] [--stop-after-day D] [--sources P[,P…]] [--json]',
  help: [
    '--days N             days to simulate, 1 to 366 (default 365)',
    '--seed S             the run seed (default 1)',
    '--broken NAME        run a deliberately broken variant (docs/simulation.md lists them)',
    '--glitches KIND      wrong-upstream episodes: default, none, benign or harmful',
    '--episode N          the longest wrong-upstream episode, hours (1 to 72)',
    '--full-episodes      every episode as long as --episode',
    '--deliver-every MIN  the delivery job every MIN minutes (default 1)',
    '--run-idle-minutes   run the delivery job even in minutes with nothing due',
    "--notify-every MIN   the app's own notifier every MIN minutes (default 10)",
    '--skew S             clock skew between the parts, seconds (0 to 60)',
    '--no-fickle          users never change their minds',
    '--trace ID[,ID…]     print what happens to these contests (stderr)',
    '--stop-after-day D   stop after day D',
    '--sources P[,P…]     the sources whose jobs run: codeforces, atcoder, codechef, leetcode (default all four)',
    '--json               print the report as one JSON object',
  ],
  options: {
    days: { type: 'string' },
    seed: { type: 'string' },
    broken: { type: 'string' },
    json: { type: 'boolean', default: false },
    'notify-every': { type: 'string' },
    'deliver-every': { type: 'string' },
    'run-idle-minutes': { type: 'boolean', default: false },
    episode: { type: 'string' },
    'full-episodes': { type: 'boolean', default: false },
    glitches: { type: 'string' },
    trace: { type: 'string' },
    'stop-after-day': { type: 'string' },
    skew: { type: 'string' },
    'no-fickle': { type: 'boolean', default: false },
    sources: { type: 'string' },
  },
} as const;

const values = parseCommandLine(COMMAND);
const glitches = values.glitches ?? 'default';
if (glitches !== 'default' && glitches !== 'none' && glitches !== 'harmful' && glitches !== 'benign')
  refuse(COMMAND, `--glitches takes default, none, benign or harmful, got ${glitches}`);
const trace = values.trace === undefined ? [] : values.trace.split(',').map(Number);
if (trace.some((id) => !Number.isSafeInteger(id) || id <= 0))
  refuse(COMMAND, `--trace takes contest ids separated by commas, got ${values.trace}`);

const KNOWN_SOURCES = ['codeforces', 'atcoder', 'codechef', 'leetcode'] as const;
type SourceName = (typeof KNOWN_SOURCES)[number];
const sources = (values.sources ?? KNOWN_SOURCES.join(',')).split(',').map((name) => name.trim());
if (
  sources.length === 0 ||
  sources.length > KNOWN_SOURCES.length ||
  sources.some((name) => !(KNOWN_SOURCES as readonly string[]).includes(name))
)
  refuse(COMMAND, `--sources takes some of ${KNOWN_SOURCES.join(', ')} separated by commas, got ${values.sources?.slice(0, 80)}`);
if (new Set(sources).size !== sources.length) refuse(COMMAND, `--sources names a source twice: ${values.sources?.slice(0, 80)}`);

const given = {
  days: wholeNumber(COMMAND, 'days', values.days, 365, 1, 366),
  seed: wholeNumber(COMMAND, 'seed', values.seed, 1, 0, 2 ** 31),
  notifyEvery: wholeNumber(COMMAND, 'notify-every', values['notify-every'], 10, 1, 60),
  deliverEvery: wholeNumber(COMMAND, 'deliver-every', values['deliver-every'], 1, 1, 60),
  episode: values.episode === undefined ? undefined : wholeNumber(COMMAND, 'episode', values.episode, 0, 1, 72),
  skew: values.skew === undefined ? undefined : wholeNumber(COMMAND, 'skew', values.skew, 0, 0, 60),
  stopAfterDay:
    values['stop-after-day'] === undefined ? undefined : wholeNumber(COMMAND, 'stop-after-day', values['stop-after-day'], 365, 1, 366),
};

// The simulation, DynamoDB Local and the CDK app load once the command line is known to be good.
const { startDynamoDbLocal } = await import('../../local/dynamodb-local.js');
const { synthTemplate } = await import('../../local/template.js');
const { BENIGN_GLITCHES, DEFAULT_EPISODE, HARMFUL_GLITCHES, NO_GLITCHES } = await import('./glitches.js');
const { BROKEN_VARIANTS, DEFAULT_CLOCK_SKEW_SECONDS, runSimulation } = await import('./runner.js');
if (values.broken !== undefined && !(values.broken in BROKEN_VARIANTS))
  refuse(COMMAND, `--broken takes one of ${Object.keys(BROKEN_VARIANTS).join(', ')}, got ${values.broken}`);

const options = {
  ...given,
  broken: values.broken,
  json: values.json,
  runIdleMinutes: values['run-idle-minutes'],
  episode: given.episode ?? DEFAULT_EPISODE,
  fullEpisodes: values['full-episodes'],
  glitches,
  trace,
  skew: given.skew ?? DEFAULT_CLOCK_SKEW_SECONDS,
  fickle: !values['no-fickle'],
  sources: sources as SourceName[],
};

function readable(report: SimReport): string {
  const lines: string[] = [];
  const out = (line = ''): void => {
    lines.push(line);
  };
  const pairs = (record: Record<string, number>): string =>
    Object.entries(record)
      .sort()
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none';
  out(
    `simulated ${report.days} days from ${report.yearStart} (seed ${report.seed}, episodes up to ${report.episode} h${report.broken !== null ? `, broken: ${report.broken}` : ''})`,
  );
  out(`intervals:        ${report.intervals}`);
  out(`invocations:      ${report.invocations}`);
  out(`syncs:            ${report.syncs}`);
  out(`skips:            ${pairs(report.skips)}`);
  out(`failures:         ${pairs(report.failures)}`);
  out(`held:             ${pairs(report.held)} (most at once ${report.contestsHeldMax})`);
  out(`counts (summed):  ${pairs(report.countsTotal)}`);
  out(`glitches:         ${pairs(report.glitches)} (hours; ${report.wrongUpstreamHours} hours without an honest reply)`);
  out(
    `truth:            ${report.truth.contests} contests; changes ${pairs(report.truth.changes)} (${report.truth.massChanges} in mass changes, ${report.truth.nearChanges} within 3 h of the start)`,
  );
  out(
    `staleness:        max ${report.maxStalenessIntervals} interval(s), ${report.staleHours} stale hour(s); contests deleted while listed ${report.contestsDeletedWhileListed}`,
  );
  const r = report.reminders;
  out(
    `reminders:        set ${r.set}, expected ${r.expected}, fired ${r.fired} (on time ${r.onTime}, late within the promise ${r.lateExcused}, refired for a new start ${r.refired}, announcing a start not listed then ${r.untrueStart}; latest ${r.maxLateMinutes} min after its true time)`,
  );
  out(
    `                  early ${r.early}, late ${r.late}, missed ${r.missed}, duplicate ${r.duplicate}, for withdrawn ${r.forWithdrawn}, after a cancel ${r.afterCancel}`,
  );
  out(
    `                  intents ${r.intents}, cancels ${r.cancels}, superseded ${r.superseded}; not judged: start never shown ahead ${r.startNotShown}; early for a start changed after the last reply ${r.earlyUnseen}; claims without an event ${r.silentClaims}`,
  );
  const d = report.delivery;
  out(
    `delivery job:     ${d.minutes} minutes: ${d.idleMinutesSkipped} idle (nothing in byDue due: not run), ${d.invocations} invocations (${d.idle} idle, ${d.succeeded} succeeded; skips ${pairs(d.skips)}; failures ${pairs(d.failures)})`,
  );
  out(`                  passes summed: ${pairs(d.counts)}`);
  out(`                  requests ${pairs(d.requests)}`);
  const e = report.events;
  out(
    `events:           ${e.streamRecords} stream records in ${e.streamReads} reads, ${e.relayInvocations} relay invocations (${e.relayRepeats} repeated, ${e.batchRetries} batch retries, ${e.givenUp} given up), ${e.entriesRefused} entries refused and re-sent`,
  );
  out(
    `                  ${e.accepted} accepted by the bus, ${e.deliveries} deliveries to the app (${e.busDuplicates} duplicated, ${e.lateDeliveries} late); consumer: ${e.handled} handled, ${e.deduped} deduped; latest ${e.maxLagSeconds} s after the commit`,
  );
  const c = report.contestEvents;
  out(
    `contest events:   received ${pairs(c.received)}; untrue when they arrived ${pairs(c.untrueOnArrival)}; the same id twice ${c.repeated}`,
  );
  const a = report.app;
  out(
    `app:              reminders written due ${a.appWrites.due}, not due ${a.appWrites.notDue}, unchanged ${a.appWrites.unchanged}, cancelled ${a.appWrites.cancels}, refused ${pairs(a.appWrites.refused)}, read again ${a.appWrites.conditionRetries}${a.ownNotifier !== undefined ? `; its own notifier: ${a.ownNotifier.passes} passes, ${a.ownNotifier.claimsLost} claims lost` : ''}`,
  );
  out(`                  fickle users: ${pairs(a.fickle)}`);
  out(
    `requests:         ${report.requests.total} (${report.requests.perInvocation} per invocation); ${pairs(report.requests.byOperation)}`,
  );
  out(`AWS faults:       ${pairs(report.requests.injected)}`);
  out(
    `cost:             $${report.costUsdPerMonth.toFixed(4)} per month (the sync's DynamoDB requests), $${report.deliveryCostUsdPerMonth.toFixed(4)} (the delivery job's, an idle minute's Query each minute included)`,
  );
  out(
    `TTL sweeps:       contests ${report.ttlSwept.contests}, coordination ${report.ttlSwept.coordination}, reminders ${report.ttlSwept.reminders}`,
  );
  out('storage by month: month contests reminders remindersDue runRecords runBytes deliveryRuns leaseBytes ledger handoff');
  for (const m of report.storageByMonth) {
    out(
      `  ${[m.month, m.contests, m.reminders, m.remindersDue, m.runRecords, m.runRecordsBytes, m.deliveryRunRecords, m.leaseItemBytes, m.ledgerEntries, m.handoffEntries].map(String).join(' ')}`,
    );
  }
  for (const [platform, p] of Object.entries(report.platforms)) {
    const r = p.reminders;
    out(
      `${`${platform}:`.padEnd(18)}${p.truth.contests} contests (changes ${pairs(p.truth.changes)}, ${p.truth.placeholders} placeholders, ${p.truth.misdated} misdated); ${p.syncs} syncs of ${p.invocations} invocations, failed ${pairs(p.failures)}, skipped ${pairs(p.skips)}, held ${pairs(p.held)}`,
    );
    out(
      `                  reminders set ${r.set}, expected ${r.expected}: on time ${r.onTime}, late within the promise ${r.lateExcused}, late ${r.late}, missed ${r.missed}, early ${r.early}, duplicate ${r.duplicate}, for withdrawn ${r.forWithdrawn}; ${r.fired} received (${r.refired} again for a new start); violations ${p.violationsTotal} (${pairs(p.violationsByInvariant)}); view stale at most ${p.maxStalenessIntervals} intervals`,
    );
  }
  out(`violations:       ${report.violationsTotal} (${pairs(report.violationsByInvariant)})`);
  for (const v of report.violations.slice(0, 20)) out(`  hour ${v.hour} [${v.invariant}] ${v.detail}`);
  if (report.violationsTotal > 20) out(`  … and ${report.violationsTotal - 20} more`);
  out(`run time:         ${report.runTimeSeconds} s`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  if (!options.json) process.stderr.write(`simulate: ${options.days} days, seed ${options.seed}; starting DynamoDB Local…\n`);
  const [dynamo, synth] = await Promise.all([startDynamoDbLocal(), synthTemplate({ bundle: false })]);
  try {
    const report = await runSimulation(
      { dynamoEndpoint: dynamo.endpoint, template: synth.template },
      {
        seed: options.seed,
        days: options.days,
        notifyEveryMinutes: options.notifyEvery,
        deliverEveryMinutes: options.deliverEvery,
        runIdleMinutes: options.runIdleMinutes,
        episode: options.episode,
        fullEpisodes: options.fullEpisodes,
        ...(options.glitches === 'none'
          ? { glitchRates: NO_GLITCHES }
          : options.glitches === 'harmful'
            ? { glitchRates: HARMFUL_GLITCHES }
            : options.glitches === 'benign'
              ? { glitchRates: BENIGN_GLITCHES }
              : {}),
        ...(options.broken !== undefined ? { broken: options.broken } : {}),
        ...(options.stopAfterDay !== undefined ? { stopAfterDays: options.stopAfterDay } : {}),
        clockSkewSeconds: options.skew,
        sources: options.sources,
        ...(options.fickle ? {} : { fickle: { perHour: 0, perSync: 0 } }),
        ...(options.trace.length > 0
          ? { trace: { contests: options.trace, write: (line: string) => process.stderr.write(`trace ${line}\n`) } }
          : {}),
        onDay: (day, checker) => {
          if (day % 30 === 0) process.stderr.write(`simulate: day ${day}, ${checker.violationsTotal} violation(s)\n`);
        },
      },
    );
    process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : `${readable(report)}\n`);
    process.exitCode = report.violationsTotal > 0 ? 1 : 0;
  } finally {
    await dynamo.stop();
  }
}

main().then(
  () => process.exit(),
  (error: unknown) => {
    process.stderr.write(`simulate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
