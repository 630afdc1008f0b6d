#!/usr/bin/env node
/**
 * `npm run redrive`: resend the outbox's events committed in a time window, after a dead letter
 * (docs/runbook.md, "Events not delivered"). A dry run by default: it lists every item of the
 * window and what it would do; `--apply` resends. It refuses any event older than the consumers'
 * dedupe window allows, and any ReminderDue whose start has passed or that its contest or its
 * reminder no longer agrees with (cli/redrive/plan.ts).
 *
 *   npm run redrive -- --from 2026-12-01T10:00:00Z [--to 2026-12-01T11:00:00Z]          the stack ContestSync
 *   npm run redrive -- --stack ContestSync-dev --from ...                                 another stack (its outputs)
 *   npm run redrive -- --outbox T --contests T --reminders T --from ...                   tables by name
 *   ... --apply                                                                           resend
 *   npm run redrive -- --help                                                             the usage
 */
import type { CloudFormationClient as CloudFormation } from '@aws-sdk/client-cloudformation';
import type { RedriveTables } from '../cli/redrive/outbox.js';
import { parseCommandLine, refuse } from '../cli/args.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const COMMAND = {
  command: 'npm run redrive',
  npmScript: 'redrive',
  synopsis: '-- --from ISO [--to ISO] [--stack NAME | --outbox T --contests T --reminders T] [--region R] [--apply]',
  help: [
    '--from ISO, --to ISO  the window of commit times to redrive (--to: default now)',
    '--stack NAME          the stack whose outputs name the tables (default ContestSync)',
    '--outbox T --contests T --reminders T   the tables by name instead',
    "--region R            the AWS region (default: the SDK's)",
    '--apply               resend; without it, a dry run that lists what it would do and writes nothing',
  ],
  options: {
    from: { type: 'string' },
    to: { type: 'string' },
    stack: { type: 'string' },
    outbox: { type: 'string' },
    contests: { type: 'string' },
    reminders: { type: 'string' },
    region: { type: 'string' },
    apply: { type: 'boolean', default: false },
  },
} as const;

const values = parseCommandLine(COMMAND);
const { RedriveUsageError, parseWindow } = await import('../cli/redrive/plan.js');
let window: ReturnType<typeof parseWindow>;
try {
  window = parseWindow(values.from, values.to, Date.now());
} catch (error) {
  if (!(error instanceof RedriveUsageError)) throw error;
  refuse(COMMAND, error.message);
}
const byName = [values.outbox, values.contests, values.reminders];
if (byName.some((name) => name !== undefined) && (values.stack !== undefined || byName.some((name) => name === undefined)))
  refuse(COMMAND, 'give --outbox, --contests and --reminders together, or --stack');

// The AWS SDK and the stack's names load once the command line is known to be good.
const { CloudFormationClient, DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
const { DynamoDBDocumentClient } = await import('@aws-sdk/lib-dynamodb');
const { STACK_ID } = await import('../lib/contest-sync-stack.js');
const { formatRedrive } = await import('../cli/redrive/format.js');
const { RedriveError, redrive } = await import('../cli/redrive/outbox.js');

/** The stack outputs that name the tables. */
const OUTPUTS: Record<keyof RedriveTables, string> = {
  outbox: 'OutboxTableName',
  contests: 'ContestsTableName',
  reminders: 'RemindersTableName',
};

async function tablesOfStack(cloudFormation: CloudFormation, stackName: string): Promise<RedriveTables> {
  const { Stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }));
  const outputs = Stacks?.[0]?.Outputs ?? [];
  const value = (key: string) => {
    const found = outputs.find((o) => o.OutputKey === key)?.OutputValue;
    if (found === undefined) throw new RedriveError(`stack ${stackName} has no ${key} output; is it a contest-sync stack?`);
    return found;
  };
  return { outbox: value(OUTPUTS.outbox), contests: value(OUTPUTS.contests), reminders: value(OUTPUTS.reminders) };
}

try {
  const region = values.region === undefined ? {} : { region: values.region };
  let tables: RedriveTables;
  if (values.outbox !== undefined) {
    tables = { outbox: values.outbox, contests: values.contests!, reminders: values.reminders! };
  } else {
    const cloudFormation = new CloudFormationClient(region);
    tables = await tablesOfStack(cloudFormation, values.stack ?? STACK_ID);
    cloudFormation.destroy();
  }
  const client = new DynamoDBClient(region);
  const doc = DynamoDBDocumentClient.from(client);
  const result = await redrive({ doc, tables, ...window, now: Date.now, apply: values.apply });
  client.destroy();
  process.stdout.write(formatRedrive(result.plan, result.outcomes, values.apply, window));
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`redrive: ${message}`);
  process.exitCode = 1;
}
