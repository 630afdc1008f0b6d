/**
 * Randomized fault injection with a history checker (Jepsen-style) on the bundled function.
 *
 *   npm run chaos -- --trials N [--seed S] [--workers W] [--parallel P] [--first I] [--aws on|off]
 *                    [--delivery D] [--sources LIST] [--json FILE] [--verbose]
 *
 * Each trial runs W worker processes (default 8) against DynamoDB Local and the Codeforces
 * stand-in, injects faults from a plan derived from the run seed and the trial index, then checks
 * the recorded history and the final tables. Prints trials run, faults injected by kind and
 * violations; `--aws on` (the default) adds AWS faults through the DynamoDB proxies (transaction
 * conflicts, throttling, HTTP 500, connections dropped after apply) and counts them by kind and
 * operation; `--delivery D` (default 6, 0: off) runs D reminder delivery workers per trial beside the
 * syncs, under the same faults, and checks "exactly once per reminder and start" (delivery-checker.ts);
 * `--json FILE` writes the summary as JSON. On a violation, the trial's seed and the command that replays it. Exits 1 on any
 * violation; what the machine's load kept from being judged is listed as starved (checker.ts), not
 * counted as a violation. A mistake on the command line is answered in one line with the usage
 * (`--help`), exit 2.
 */
import { setMaxListeners } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCommandLine, refuse, wholeNumber } from '../../cli/args.js';
import type { ChaosSummary } from './suite.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.CDK_DISABLE_CLI_TELEMETRY = 'true';
setMaxListeners(100);

const COMMAND = {
  command: 'npm run chaos',
  npmScript: 'chaos',
  synopsis:
    '-- [--trials N] [--seed S] [--workers W] [--parallel P] [--first I] [--aws on|off] [--delivery D] [--sources LIST] [--json FILE] [--verbose]',
  help: [
    '--trials N     trials to run (default 10)',
    '--seed S       the run seed (default: a random one, printed)',
    '--workers W    sync worker processes per trial (default 8)',
    '--parallel P   trials at once (default 1)',
    '--first I      the index of the first trial (a replay starts at the failing one)',
    '--aws on|off   AWS faults through the DynamoDB proxies (default on)',
    '--delivery D   reminder delivery workers per trial (default 6; 0: none)',
    "--sources LIST the other source jobs run beside Codeforces' (default atcoder,codechef,leetcode; none: Codeforces alone)",
    '--json FILE    also write the summary as JSON to FILE',
    "--verbose      each trial's phases, outcomes and faults",
  ],
  options: {
    trials: { type: 'string' },
    seed: { type: 'string' },
    workers: { type: 'string' },
    parallel: { type: 'string' },
    first: { type: 'string' },
    aws: { type: 'string' },
    delivery: { type: 'string' },
    sources: { type: 'string' },
    json: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
} as const;

interface Options {
  trials: number;
  seed: number;
  workers: number;
  parallel: number;
  /** Index of the first trial (replays start at the failing one). */
  first: number;
  verbose: boolean;
  aws: boolean;
  delivery: number;
  sources: string[];
  json: string | undefined;
}

const OTHER_PLATFORMS = ['atcoder', 'codechef', 'leetcode'];

function options(): Options {
  const values = parseCommandLine(COMMAND);
  if (values.aws !== undefined && values.aws !== 'on' && values.aws !== 'off') refuse(COMMAND, `--aws takes on or off, got ${values.aws}`);
  const sources =
    values.sources === undefined ? OTHER_PLATFORMS : values.sources === 'none' ? [] : values.sources.split(',').map((p) => p.trim());
  const unknown = sources.filter((p) => !OTHER_PLATFORMS.includes(p));
  if (unknown.length > 0) refuse(COMMAND, `--sources takes ${OTHER_PLATFORMS.join(',')} or none, got ${unknown.join(',')}`);
  return {
    sources,
    trials: wholeNumber(COMMAND, 'trials', values.trials, 10, 1),
    seed: wholeNumber(COMMAND, 'seed', values.seed, Math.floor(Math.random() * 2 ** 31), 0),
    workers: wholeNumber(COMMAND, 'workers', values.workers, 8, 1),
    parallel: wholeNumber(COMMAND, 'parallel', values.parallel, 1, 1),
    first: wholeNumber(COMMAND, 'first', values.first, 0, 0),
    verbose: values.verbose,
    aws: values.aws !== 'off',
    delivery: wholeNumber(COMMAND, 'delivery', values.delivery, 6, 0),
    json: values.json,
  };
}

function report(summary: ChaosSummary, options: Options, wallMs: number): void {
  const out = (line = '') => process.stdout.write(`${line}\n`);
  out();
  out(
    `trials run:      ${summary.trials.length} (run seed ${options.seed}, ${options.workers} workers per trial, AWS faults ${options.aws ? 'on' : 'off'})`,
  );
  out(`invocations:     ${summary.invocations}`);
  out(`wall time:       ${(wallMs / 1000).toFixed(1)} s`);
  out('faults injected:');
  for (const [kind, n] of Object.entries(summary.faults).sort()) out(`  ${kind.padEnd(24)} ${n}`);
  if (options.aws) {
    out('AWS faults by operation:');
    for (const [fault, byOperation] of Object.entries(summary.awsFaults).sort()) {
      const detail = Object.entries(byOperation)
        .sort()
        .map(([operation, n]) => `${operation} ${n}`)
        .join(', ');
      out(`  ${fault.padEnd(20)} ${detail}`);
    }
    const retries = Object.entries(summary.contentionRetries)
      .sort()
      .map(([operation, n]) => `${operation} ${n}`)
      .join(', ');
    out(`contention retries logged by the function: ${retries || 'none'}`);
    out(`skips lease-held after contention outlasted the acquire's budget: ${summary.contentionSkips}`);
  }
  out('outcomes:');
  for (const [kind, n] of Object.entries(summary.outcomes).sort()) out(`  ${kind.padEnd(26)} ${n}`);
  const d = summary.delivery;
  if (d !== undefined) {
    out(`reminder delivery (${d.trials} trials): ${d.invocations} invocations`);
    out(`  claims committed:        ${d.claims} (${d.duringFaults} during the faults phase)`);
    out(`  ReminderDue events:      ${d.events} (${d.reminders} reminders, ${d.resent} sent again at a new start)`);
    const byPlatform = Object.entries(d.eventsByPlatform)
      .sort()
      .map(([platform, n]) => `${platform} ${n}`)
      .join(', ');
    out(`    by platform:           ${byPlatform || 'none'}`);
    out(`  claims lost / deferred:  ${d.lost} / ${d.deferred}`);
    out(`  app writes (write path): ${d.appWrites} sets and cancels landed, judged per intent`);
    out('  outcomes:');
    for (const [kind, n] of Object.entries(d.outcomes).sort()) out(`    ${kind.padEnd(24)} ${n}`);
  }
  for (const [platform, figures] of Object.entries(summary.sources ?? {}).sort()) {
    const outcomes = Object.entries(figures.outcomes)
      .sort()
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ');
    out(
      `source ${platform}: ${figures.invocations} invocations, ${figures.requests} upstream requests, ${figures.awsFaults} AWS faults; ${outcomes}`,
    );
  }
  const failing = summary.trials.filter((trial) => trial.violations.length > 0);
  out(`violations:      ${summary.violations}`);
  for (const [rule, n] of Object.entries(summary.violationsByRule).sort()) out(`  ${rule.padEnd(18)} ${n}`);
  out(`starved:         ${summary.starved} (the machine kept the harness from giving these a fair run: not judged, not violations)`);
  for (const [rule, n] of Object.entries(summary.starvedByRule).sort()) out(`  ${rule.padEnd(18)} ${n}`);
  for (const trial of summary.trials.filter((t) => t.starved.length > 0)) {
    for (const note of trial.starved.slice(0, 5)) out(`  trial ${trial.index} [${note.rule}] ${note.message}`);
  }
  for (const trial of failing) {
    out();
    out(`trial ${trial.index} (trial seed ${trial.seed}) — ${trial.violations.length} violation(s):`);
    for (const violation of trial.violations.slice(0, 10)) out(`  [${violation.rule}] ${violation.message}`);
    if (trial.violations.length > 10) out(`  … and ${trial.violations.length - 10} more`);
    out(
      `  replay: npm run chaos -- --seed ${options.seed} --trials 1 --first ${trial.index} --workers ${options.workers} --aws ${options.aws ? 'on' : 'off'} --delivery ${options.delivery} --sources ${options.sources.join(',') || 'none'}`,
    );
  }
}

async function main(options: Options): Promise<void> {
  // The run, DynamoDB Local and the CDK app load once the command line is known to be good.
  const { startDynamoDbLocal } = await import('../../local/dynamodb-local.js');
  const { bundleDirOfFunction, findDeliveryFunction, synthTemplate } = await import('../../local/template.js');
  const { runChaos } = await import('./suite.js');
  const { sourceEntriesOf } = await import('./sources.js');
  const { first } = options;
  const started = Date.now();
  process.stdout.write(
    `chaos: run seed ${options.seed}, trials ${first}..${first + options.trials - 1}; starting DynamoDB Local and bundling…\n`,
  );
  const [dynamo, synth] = await Promise.all([startDynamoDbLocal(), synthTemplate({ bundle: true })]);
  if (synth.bundleDir === undefined) throw new Error('synthesis produced no function bundle');
  const deliveryEntry = join(
    bundleDirOfFunction(synth.outdir, synth.template, findDeliveryFunction(synth.template).logicalId),
    'index.mjs',
  );
  const client = dynamo.client();
  try {
    const summary = await runChaos(
      {
        dynamoEndpoint: dynamo.endpoint,
        bundleEntry: join(synth.bundleDir, 'index.mjs'),
        deliveryEntry,
        sourceEntries: sourceEntriesOf(synth.outdir, synth.template),
        template: synth.template,
        client,
      },
      {
        seed: options.seed,
        trials: options.trials,
        first,
        workers: options.workers,
        parallel: options.parallel,
        aws: options.aws,
        deliveryWorkers: options.delivery,
        sources: options.sources,
        onTrial: (trial) => {
          const starved = trial.starved.length > 0 ? ` (${trial.starved.length} starved)` : '';
          const status = (trial.violations.length === 0 ? 'ok' : `${trial.violations.length} VIOLATION(S)`) + starved;
          const detail = options.verbose
            ? ` (faults ${trial.phasesMs.faults} ms, quiet ${trial.phasesMs.quiet} ms) ${JSON.stringify(trial.outcomes)} ${JSON.stringify(trial.faults)}${trial.delivery !== undefined ? ` delivery ${JSON.stringify(trial.delivery)}` : ''}`
            : '';
          const sent = trial.delivery !== undefined ? `, ${trial.delivery.events} reminders sent` : '';
          const only = trial.plan.aws?.contentionOnly === true ? ' [contention only]' : '';
          process.stdout.write(
            `trial ${trial.index} (trial seed ${trial.seed})${only}: ${status}, ${trial.invocations} invocations, ` +
              `${(trial.durationMs / 1000).toFixed(1)} s${sent}${detail}\n`,
          );
        },
      },
    );
    const wallMs = Date.now() - started;
    report(summary, options, wallMs);
    if (options.json !== undefined) {
      const { trials, ...totals } = summary;
      const failing = trials
        .filter((trial) => trial.violations.length > 0)
        .map(({ index, seed, violations }) => ({ index, seed, violations }));
      writeFileSync(options.json, `${JSON.stringify({ options, wallMs, trials: trials.length, ...totals, failing }, null, 2)}\n`);
    }
    process.exitCode = summary.violations > 0 ? 1 : 0;
  } finally {
    client.destroy();
    await dynamo.stop();
  }
}

main(options()).then(
  () => process.exit(),
  (error: unknown) => {
    process.stderr.write(`chaos: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
