/** The heartbeat job's CDK app: `npx cdk synth --app "npx tsx examples/heartbeat/stack.ts"`. */
import { fileURLToPath } from 'node:url';
import { App, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import { OutboxDelivery, ScheduledSingletonJob } from '@contest-sync/scheduled-singleton/cdk';
import { addNagChecks } from '@contest-sync/scheduled-singleton/nag';

export function createHeartbeatApp(props: { outdir?: string } = {}) {
  const app = new App(props);
  const stack = new Stack(app, 'Heartbeat');
  const beats = new dynamodb.Table(stack, 'Beats', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const delivery = new OutboxDelivery(stack, 'Events', { metrics: { namespace: 'Heartbeat', service: 'heartbeat-events' } });
  const job = new ScheduledSingletonJob(stack, 'Heartbeat', {
    entry: fileURLToPath(new URL('./handler.ts', import.meta.url)),
    schedule: events.Schedule.rate(Duration.minutes(5)),
    periodMinutes: 5,
    leaseDuration: Duration.seconds(10),
    timeout: Duration.seconds(60),
    leaseKey: 'lease#heartbeat',
    runRecordPrefix: 'run#heartbeat#',
    metrics: { namespace: 'Heartbeat', service: 'heartbeat' },
    environment: { BEATS_TABLE_NAME: beats.tableName },
    deployRunAfter: [beats],
    dashboard: true,
    outbox: {
      delivery,
      source: 'heartbeat',
      schemas: { Beat: { required: ['beat', 'fence'], properties: { beat: { type: 'string' }, fence: { type: 'number' } } } },
    },
  });
  beats.grant(job.function, 'dynamodb:PutItem');
  addNagChecks(app);
  return { app, stack, job, beats, delivery };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) createHeartbeatApp().app.synth();
