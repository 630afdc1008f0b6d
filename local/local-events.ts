/**
 * The event path of the stack, on this machine (`npm start`): a function's environment from the
 * synthesized template with its table references resolved to the local tables; and delivery as
 * deployed: the outbox table's stream read by the event source mapping's stand-in (configured from
 * the template), the relay's code in this process, and the bus stand-in with a rule that takes
 * every event of the product, received by a consumer that dedupes on `detail.eventId`
 * (docs/events.md), and the rules a caller adds (the door's: the feed queue, the webhooks).
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { outboxRelay } from '@contest-sync/scheduled-singleton/relay';
import { startBusStandin, type BusEvent, type BusRule, type Target } from './bus-standin.js';
import { mappingFromTemplate, startStreamPoller } from './stream-poller.js';
import { tableDefinitionsFromTemplate, type TableNames } from './tables.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './dynamodb-local.js';
import { resolvedEnvironment, type CfnTemplate } from './template.js';

/** A function's environment as the template sets it, each table `Ref` resolved to its local name. */
export function functionEnv(template: CfnTemplate, logicalId: string, names: TableNames): Record<string, string> {
  const byLogicalId = Object.fromEntries(
    tableDefinitionsFromTemplate(template).flatMap((d) => (names[d.role] !== undefined ? [[d.logicalId, names[d.role]!]] : [])),
  );
  return resolvedEnvironment(template, logicalId, byLogicalId);
}

export interface Received {
  /** Events the consumer acted on: the first delivery of each `detail.eventId`. */
  events: BusEvent[];
  /** Deliveries it dropped as already seen. */
  duplicates: number;
  /** Events committed before `since` (a persisted database's earlier runs: the stream keeps 24 hours). */
  earlier: number;
}

/**
 * Delivers what the outbox table holds (its stream from the oldest record DynamoDB Local keeps):
 * relay, bus, and a deduping consumer. Resolves once the stream is drained and the bus idle.
 */
export async function deliverOutbox(options: {
  template: CfnTemplate;
  dynamo: DynamoDBClient;
  endpoint: string;
  names: TableNames;
  sinceMs?: number;
  /** More of the bus's rules and their targets (the door's: the feed queue, the webhook relay). */
  more?: { rules: BusRule[]; targets: Record<string, Target> };
}): Promise<Received> {
  const { template, names } = options;
  const outboxId = tableDefinitionsFromTemplate(template).find((d) => d.role === 'outbox')?.logicalId;
  if (outboxId === undefined || names.outbox === undefined) throw new Error('the template has no outbox table');
  const seen = new Set<string>();
  const received: Received = { events: [], duplicates: 0, earlier: 0 };
  const bus = await startBusStandin({
    rules: [
      { name: 'LocalConsumer', pattern: { source: [{ prefix: 'contest-sync.' }] }, targets: ['consumer'] },
      ...(options.more?.rules ?? []),
    ],
    targets: {
      ...options.more?.targets,
      consumer: async (event) => {
        const id = String(event.detail.eventId);
        if (seen.has(id)) received.duplicates += 1;
        else if (options.sinceMs !== undefined && Date.parse(event.time) < options.sinceMs) {
          seen.add(id);
          received.earlier += 1;
        } else {
          seen.add(id);
          received.events.push(event);
        }
      },
    },
  });
  const client = new EventBridgeClient({ endpoint: bus.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const relay = outboxRelay({
    putEvents: (entries) => client.send(new PutEventsCommand({ Entries: entries })),
    env: { EVENT_BUS_NAME: 'local' },
    write: () => undefined,
  });
  const { config } = mappingFromTemplate(template, outboxId);
  const poller = await startStreamPoller({
    endpoint: options.endpoint,
    dynamo: options.dynamo,
    tableName: names.outbox,
    config,
    invoke: (records) => relay({ Records: records }),
  });
  try {
    await poller.drained(500, 30_000);
    await bus.idle();
  } finally {
    await poller.stop();
    client.destroy();
    await bus.close();
  }
  return received;
}
