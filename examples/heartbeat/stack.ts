/**
 * The heartbeat job's CDK app: a table for the beats and one ScheduledSingletonJob. Pass
 * `coordinationTable` to share another stack's coordination table; without it the job creates one.
 *
 *   npx cdk synth --app "npx tsx examples/heartbeat/stack.ts"
 */
import { fileURLToPath } from 'node:url';
import { App, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { ScheduledSingletonJob } from '../../lib/constructs/scheduled-singleton-job.js';
import { addNagChecks } from '../../lib/nag.js';
import { ENV, LEASE_KEY, METRICS, RUN_RECORD_PREFIX } from './contract.js';

export interface HeartbeatStackProps extends StackProps {
  readonly coordinationTable?: dynamodb.ITable;
}

export class HeartbeatStack extends Stack {
  public readonly beats: dynamodb.Table;
  public readonly job: ScheduledSingletonJob;

  constructor(scope: Construct, id: string, props: HeartbeatStackProps = {}) {
    super(scope, id, props);
    this.beats = new dynamodb.Table(this, 'Beats', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.job = new ScheduledSingletonJob(this, 'Heartbeat', {
      entry: fileURLToPath(new URL('./handler.ts', import.meta.url)),
      schedule: events.Schedule.rate(Duration.minutes(5)),
      periodMinutes: 5,
      leaseKey: LEASE_KEY,
      runRecordPrefix: RUN_RECORD_PREFIX,
      ...(props.coordinationTable !== undefined ? { coordinationTable: props.coordinationTable } : {}),
      leaseDuration: Duration.seconds(10),
      timeout: Duration.seconds(60),
      environment: { [ENV.beatsTable]: this.beats.tableName },
      statements: [new iam.PolicyStatement({ sid: 'BeatsTable', actions: ['dynamodb:PutItem'], resources: [this.beats.tableArn] })],
      deployRunAfter: [this.beats],
      metrics: METRICS,
    });
  }
}

export function createHeartbeatApp(options: { outdir?: string; context?: Record<string, unknown> } = {}): { app: App; stack: HeartbeatStack } {
  const app = new App({ ...(options.outdir !== undefined ? { outdir: options.outdir } : {}), ...(options.context !== undefined ? { context: options.context } : {}) });
  const stack = new HeartbeatStack(app, 'Heartbeat');
  addNagChecks(app);
  return { app, stack };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) createHeartbeatApp().app.synth();
