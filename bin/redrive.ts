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
 */
import { parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { STACK_ID } from '../lib/contest-sync-stack.js';
import { formatRedrive } from '../cli/redrive/format.js';
import { RedriveError, redrive, type RedriveTables } from '../cli/redrive/outbox.js';
import { RedriveUsageError, parseWindow } from '../cli/redrive/plan.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE =
  'usage: npm run redrive -- --from ISO [--to ISO] [--stack NAME | --outbox T --contests T --reminders T] [--region R] [--apply]';

/** The stack outputs that name the tables. */
const OUTPUTS: Record<keyof RedriveTables, string> = {
  outbox: 'OutboxTableName',
  contests: 'ContestsTableName',
  reminders: 'RemindersTableName',
};

async function tablesOfStack(cloudFormation: CloudFormationClient, stackName: string): Promise<RedriveTables> {
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
  const { values } = parseArgs({
    options: {
      from: { type: 'string' },
      to: { type: 'string' },
      stack: { type: 'string' },
      outbox: { type: 'string' },
      contests: { type: 'string' },
      reminders: { type: 'string' },
      region: { type: 'string' },
      apply: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const window = parseWindow(values.from, values.to, Date.now());
  const byName = [values.outbox, values.contests, values.reminders];
  if (byName.some((name) => name !== undefined) && (values.stack !== undefined || byName.some((name) => name === undefined)))
    throw new RedriveUsageError('give --outbox, --contests and --reminders together, or --stack');
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
  const usage = error instanceof RedriveUsageError || String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
  console.error(`redrive: ${message}${usage ? `\n${USAGE}` : ''}`);
  process.exitCode = usage ? 2 : 1;
}
