/** The results as Markdown (what `npm run bench` prints). Pure: no I/O. */
import type { BundleResult } from './bundle.js';
import { usd, type CostInputs, type CostRow, type PRICES } from './cost.js';
import { dependencyRows, type DependencySizes } from '../local/bundle-deps.js';
import type { RunOutput } from './run-output.js';
import type { ContentionResult } from './contention.js';
import type { LongCommitResult } from './long-commit.js';
import type { PeersResult } from './peers.js';
import type { SteadyStateResult, SyncCost } from './steady-state.js';
import type { DeliveryResult } from './delivery.js';
import type { RoundResult } from './round.js';
import { renderDoor, type DoorResult } from './door.js';
import { renderWebhooks, type WebhookResult } from './webhooks.js';
import { ruleWriteUnitsPerReminder, type DeliveryCostInputs } from './delivery-cost.js';

export interface BenchResults {
  date: string;
  machine: {
    node: string;
    platform: string;
    arch: string;
    cpus: number;
    cpuModel: string;
    memoryGiB: number;
    dynamodbLocal: string;
    /** Other work on the machine skews latencies: 1-minute load average when the run started and ended. */
    loadAverage1m: { atStart: number; atEnd: number };
  };
  durationSeconds: number;
  method: Record<string, string>;
  contention: ContentionResult[];
  /** Absent from results written before it was measured. */
  longCommit?: LongCommitResult;
  steadyState: SteadyStateResult;
  lease: PeersResult['lease'];
  /** Absent from results written before each of our cycles was measured. */
  cycles?: PeersResult['cycles'];
  peers: PeersResult['peers'];
  controls: PeersResult['controls'];
  guarantees: PeersResult['guarantees'];
  bundle: BundleResult;
  dependencies: DependencySizes;
  runOutput: RunOutput;
  cost: { pricesAsOf: string; region: string; prices: typeof PRICES; inputs: CostInputs; rows: CostRow[]; totalUsd: number };
  delivery: DeliveryResult & { cost: { inputs: DeliveryCostInputs; rows: CostRow[]; totalUsd: number } };
  /** Sections measured apart from the whole run (`npm run bench -- --only delivery`), with their own date and load. */
  sections?: Partial<
    Record<
      'delivery' | 'door' | 'webhooks' | 'peers',
      { date: string; durationSeconds: number; loadAverage1m: { atStart: number; atEnd: number } }
    >
  >;
  /** The app's door (bench/door.ts); absent from results written before it was measured. */
  door?: DoorResult;
  /** The webhook relay per receiver latency (bench/webhooks.ts); absent from results written before it was measured. */
  webhooks?: WebhookResult;
}

/** A GitHub-flavoured Markdown table; `|` in cells is escaped. */
export function markdownTable(headers: string[], rows: (string | number | null)[][]): string {
  const cell = (value: string | number | null) => (value === null ? '–' : String(value).replace(/\|/g, '\\|'));
  const line = (cells: (string | number | null)[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

/** `{ UpdateItem: 2, Scan: 1 }` → `Scan 1, UpdateItem 2`. */
export function describeCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([operation, n]) => `${operation} ${n}`)
    .join(', ');
}

const ms = (value: number | null) => (value === null ? null : `${value.toFixed(1)} ms`);
const kib = (bytes: number | null) => (bytes === null ? null : `${bytes.toLocaleString('en-US')} B (${(bytes / 1024).toFixed(0)} KiB)`);

export function renderReport(results: BenchResults): string {
  const { machine } = results;
  const parts: string[] = [];
  parts.push(
    `Benchmarks of ${results.date} on Node ${machine.node}, ${machine.cpus} × ${machine.cpuModel}, ` +
      `${machine.dynamodbLocal}; run took ${results.durationSeconds} s (load average ${machine.loadAverage1m.atStart} → ` +
      `${machine.loadAverage1m.atEnd}). Requests are counted on the wire ` +
      '(they carry over to AWS); latencies are on DynamoDB Local, for local comparison only.',
  );

  parts.push('### Contention: N invocations of one scheduled interval (in-process handlers)');
  parts.push(
    markdownTable(
      ['invocations', 'rounds', 'syncs per interval', 'DynamoDB requests per skip', 'p50 time to decision', 'p99 time to decision'],
      results.contention.map((c) => [c.invocations, c.rounds, c.syncs, c.requestsPerSkip, ms(c.p50Ms), ms(c.p99Ms)]),
    ),
  );
  if (results.method.contention !== undefined) parts.push(`How: ${results.method.contention}.`);

  if (results.longCommit !== undefined) parts.push(...longCommitSection(results.longCommit, results.method.longCommit));

  const sync = (label: string, cost: SyncCost) => [
    label,
    cost.requests,
    describeCounts(cost.requestsByOperation),
    cost.readCapacityUnits,
    cost.writeCapacityUnits,
    cost.contestWrites,
  ];
  const steady = results.steadyState;
  parts.push(`### Steady state: one sync of the recorded list (${steady.contests} contests)`);
  parts.push(
    markdownTable(
      ['sync', 'requests', 'by operation', 'read units', 'write units', 'contest writes'],
      [
        sync('first (empty table)', steady.first),
        ...(steady.second !== undefined ? [sync('second (sweeps the unrecorded byDue partitions again, once ever)', steady.second)] : []),
        sync('nothing changed', steady.unchanged),
        sync('every name changed', steady.changed),
      ],
    ),
  );
  if (results.method.steadyState !== undefined) parts.push(`How: ${results.method.steadyState}.`);

  parts.push(renderPeers(results));

  const bundle = results.bundle;
  parts.push('### Deployed bundle');
  const runs = bundle.importSamplesMs.length;
  parts.push(
    markdownTable(
      [
        'file',
        'size',
        'source map (uploaded with it)',
        `import, NODE_OPTIONS as deployed (${bundle.nodeOptions || 'none'})`,
        'import, no NODE_OPTIONS',
      ],
      [[bundle.file, kib(bundle.bytes), kib(bundle.mapBytes), ms(bundle.importMs), ms(bundle.importMsPlain)]],
    ),
  );
  parts.push(`Import times: median of ${runs} fresh \`node\` processes each.`);

  parts.push('### Bundle by dependency (esbuild metafile)');
  parts.push(
    markdownTable(
      ['package', 'bytes in index.mjs', 'share'],
      dependencyRows(results.dependencies).map((row) => [row.name, row.bytes.toLocaleString('en-US'), row.share]),
    ),
  );
  parts.push(
    `Total ${results.dependencies.totalBytes.toLocaleString('en-US')} B. ` +
      Object.entries(results.dependencies.probes)
        .map(([probe, bytes]) => `${probe}: ${bytes.toLocaleString('en-US')} B`)
        .join('; ') +
      '.',
  );

  const cost = results.cost;
  parts.push(`### What it costs a month, hourly schedule (list prices, ${cost.region}, as of ${cost.pricesAsOf})`);
  parts.push(
    markdownTable(
      ['service', 'what', 'per month'],
      [...cost.rows.map((row) => [row.service, row.what, usd(row.monthlyUsd)]), ['**total**', '', `**${usd(cost.totalUsd)}**`]],
    ),
  );
  parts.push(
    `One scheduled run prints ${results.runOutput.logLines} lines, ${results.runOutput.logBytesPerRun} B, and creates ` +
      `${results.runOutput.metricSeries.length} metric series: ${results.runOutput.metricSeries.join(', ')}.`,
  );
  if (results.method.cost !== undefined) parts.push(`How: ${results.method.cost}.`);

  const d = results.delivery;
  parts.push('### Reminder delivery: 20,000 due at once, and an idle minute');
  const measured = results.sections?.delivery;
  if (measured !== undefined)
    parts.push(
      `Measured apart (\`npm run bench -- --only delivery\`) on ${measured.date} in ${measured.durationSeconds} s, load average ${measured.loadAverage1m.atStart} → ${measured.loadAverage1m.atEnd}.`,
    );
  const pass = (label: string, p: DeliveryResult['batched']) => [
    label,
    `${p.reminders.toLocaleString('en-US')} (${p.contests.toLocaleString('en-US')} contest${p.contests === 1 ? '' : 's'})`,
    (p.failedRuns ?? 0) > 0 ? `${p.runs} (${p.failedRuns} failed)` : p.runs,
    `${(p.wallMs / 1000).toFixed(1)} s`,
    p.requests,
    describeCounts(p.requestsByOperation),
    p.requestsPerReminder,
    `${p.gateChecks.toLocaleString('en-US')} (${p.gateChecksPerReminder} per reminder: ${ruleWriteUnitsPerReminder(p.gateChecksPerReminder).toFixed(3)} write units)`,
    `${p.claimed.toLocaleString('en-US')} / ${p.outboxItems.toLocaleString('en-US')} / ${p.leftDue} / ${p.duplicateIds}`,
  ];
  parts.push(
    markdownTable(
      [
        'claims',
        'reminders',
        'runs',
        'wall time (DynamoDB Local)',
        'requests',
        'by operation',
        'requests per reminder',
        'gate checks (the rule)',
        'claimed / outbox items / left due / duplicate ids',
      ],
      [
        pass(`${d.batched.claimsPerTransaction} per transaction`, d.batched),
        pass(`${d.perRow.claimsPerTransaction} per transaction (sample)`, d.perRow),
        pass(`${d.spread.claimsPerTransaction} per transaction (spread)`, d.spread),
      ],
    ),
  );
  parts.push(
    `Idle minute: ${d.idle.requests} requests for ${d.idle.partitions} partitions served (${describeCounts(d.idle.requestsByOperation)}), lease taken: ${d.idle.leaseTaken ? 'yes' : 'no'}, outcome ${d.idle.outcome}. ` +
      `Projection to AWS for 20,000: ${d.projection.sequentialTransactions} fenced transactions one after another at ~100 ms = ${d.projection.transactionsSeconds} s; ` +
      `the contest's partition at 1,000 write units/s, 2 per transactional claim = ${d.projection.contestPartitionSeconds} s; the byDue partition, 1 unit per entry removed = ${d.projection.indexPartitionSeconds} s: ` +
      `about ${d.projection.projectedSeconds} s, within the 120 s promise.`,
  );
  if (results.method.delivery !== undefined) parts.push(`How: ${results.method.delivery}.`);
  if (d.round !== undefined) parts.push(...roundSection(d.round));
  parts.push(`### What the delivery job adds a month (${d.cost.inputs.remindersPerMonth.toLocaleString('en-US')} reminders, list prices)`);
  parts.push(
    markdownTable(
      ['service', 'what', 'per month'],
      [...d.cost.rows.map((row) => [row.service, row.what, usd(row.monthlyUsd)]), ['**total**', '', `**${usd(d.cost.totalUsd)}**`]],
    ),
  );
  if (results.door !== undefined) parts.push(renderDoor(results.door));
  if (results.webhooks !== undefined) parts.push(renderWebhooks(results.webhooks));
  return `${parts.join('\n\n')}\n`;
}

/** Our lease beside the lock clients: our cycles against FailClosed, every contender, what each guarantees. */
export function renderPeers(
  results: Pick<BenchResults, 'lease' | 'cycles' | 'peers' | 'controls' | 'guarantees' | 'method' | 'sections'>,
): string {
  const parts: string[] = [];
  parts.push('### Lease acquire + release cycle, side by side');
  const measured = results.sections?.peers;
  if (measured !== undefined)
    parts.push(
      `Measured apart (\`npm run bench -- --only peers\`) on ${measured.date} in ${measured.durationSeconds} s, load average ${measured.loadAverage1m.atStart} → ${measured.loadAverage1m.atEnd}.`,
    );
  if (results.cycles !== undefined) {
    parts.push(
      markdownTable(
        ['our cycle', 'workers', 'requests per cycle', 'write units per cycle', 'lease item', 'p50', 'p99', 'ours ÷ FailClosed (p50)'],
        results.cycles.map((c) => [
          c.name,
          c.workers,
          c.requestsPerCycle,
          c.writeUnitsPerCycle,
          `${c.leaseItemBytes} B`,
          ms(c.p50Ms),
          ms(c.p99Ms),
          c.ratioToFailClosed?.toFixed(2) ?? null,
        ]),
      ),
    );
    const seen = new Set<string>();
    for (const c of results.cycles) {
      if (c.does === undefined || seen.has(c.name)) continue;
      seen.add(c.name);
      parts.push(`- ${c.name}: ${c.does}.`);
    }
  }
  const ours = [results.lease, results.lease.concurrent];
  parts.push(
    markdownTable(
      ['lock', 'workers', 'cycles', 'requests per cycle', 'p50', 'p99', 'p50 ratio to ours'],
      [
        ...ours.map((r) => [r.name, r.workers, r.cycles, r.requestsPerCycle, ms(r.p50Ms), ms(r.p99Ms), '1.00']),
        ...[...results.peers, ...results.controls].map((p) => [
          p.name,
          p.workers,
          p.cycles,
          p.requestsPerCycle,
          ms(p.p50Ms),
          ms(p.p99Ms),
          p.ratioToOurs?.toFixed(2) ?? null,
        ]),
      ],
    ),
  );
  if (results.method.peers !== undefined) parts.push(`How: ${results.method.peers}.`);
  parts.push('### What each lock guarantees (from its source)');
  parts.push(
    markdownTable(
      [
        'lock',
        'owner-checked release',
        'heartbeat',
        'fencing of data writes',
        'per-interval dedupe',
        'takeover after a crash',
        'while another holds it',
      ],
      results.guarantees.map((g) => [
        g.name,
        g.ownerCheckedRelease,
        g.heartbeat,
        g.fencingOfDataWrites,
        g.perIntervalDedupe,
        g.takeoverAfterCrash,
        g.whileHeld,
      ]),
    ),
  );
  return parts.join('\n\n');
}

/** One popular round: every job of a sharded stack at once, its hottest keys, and 100,000 projected to AWS per setting. */
export function roundSection(r: RoundResult): string[] {
  const p = r.pass;
  const n = (value: number) => value.toLocaleString('en-US');
  return [
    `### One round: ${n(p.reminders)} reminders of one contest, ${p.dueShards} delivery jobs at once`,
    `Seeded in ${(p.seedMs / 1000).toFixed(1)} s; delivered in **${(p.wallMs / 1000).toFixed(1)} s** over ${p.minutes} minutes of runs ` +
      `(${p.runs} runs, **${p.failedRuns} failed**: their rows stayed due for the next minute), ${n(p.transactions)} claim transactions committed, ` +
      `**${n(p.conflicts)} transactions refused as conflicts** (another ongoing transaction held one of their items); ${n(p.requests)} requests ` +
      `(${describeCounts(p.requestsByOperation)}). Claimed / outbox items / left due / duplicate ids: ${n(p.claimed)} / ${n(p.outboxItems)} / ${p.leftDue} / ${p.duplicateIds}.`,
    ...(p.failures.length > 0 ? [`First failures: ${p.failures.map((f) => f.slice(0, 160)).join('; ')}.`] : []),
    markdownTable(
      ['partition key (table or index)', 'write units (AWS rates)'],
      p.hottest.map((k) => [k.key, n(k.units)]),
    ),
    `Rows per bucket key of 100,000 users: ${Math.min(...r.bucketRows)} to ${Math.max(...r.bucketRows)}. Projection of 100,000 on one round to AWS ` +
      '(1,000 write units a second per partition key; ~100 ms per 100-action transaction, assumed):',
    markdownTable(
      [
        'dueShards',
        'rows of the busiest job',
        'its transactions in a row',
        'busiest bucket key',
        'busiest byDue key',
        'busiest gate (units)',
        'most units on one key',
        'the round on AWS',
      ],
      r.projections.map((x) => [
        x.dueShards,
        n(x.rowsPerJob),
        `${x.jobSeconds} s`,
        `${x.bucketKeySeconds} s`,
        `${x.indexKeySeconds} s`,
        `${x.gateSeconds} s`,
        `${n(x.mostUnits)} = ${x.unitsSeconds} s`,
        `**${x.roundSeconds} s**`,
      ]),
    ),
  ];
}

/** A lease through a large commit: per-commit turns beside per-transaction turns. */
export function longCommitSection(result: LongCommitResult, method: string | undefined): string[] {
  const scope = (turns: string) => (turns === 'commit' ? 'each commit (before)' : 'each transaction');
  return [
    `### A lease through a large commit (transactions held ${result.holdMs} ms)`,
    markdownTable(
      [
        'lease',
        'renewals take turns with',
        'planned',
        'committed',
        'outcome',
        'commit lasted',
        'renewals',
        'renewal conflicts',
        'mean transaction',
      ],
      result.cases.map((c) => [
        `${c.leaseSeconds} s`,
        scope(c.turns),
        `${c.planned} × ${result.actionsPerTransaction}`,
        `${c.committed} (${c.actions.toLocaleString('en-US')} actions)`,
        c.outcome,
        `${c.commitSeconds} s (${c.leases} leases)`,
        c.renewals,
        c.renewalConflicts,
        ms(c.meanTransactionMs),
      ]),
    ),
    ...result.comparison.map(
      (c) =>
        `Lease ${c.leaseSeconds} s: the largest commit with renewals waiting for the whole commit is ${c.perCommit} transactions; ` +
        `with per-transaction turns the planned ${c.perTransaction} committed and the lease held (at least ${c.atLeastTimes}× as large; ` +
        "the limit is now the run's deadline, not the lease).",
    ),
    ...(method !== undefined ? [`How: ${method}.`] : []),
  ];
}
