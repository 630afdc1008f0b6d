/**
 * The bus stand-in with the template's rules, delivering to the events-consumer example (Powertools
 * idempotency on detail.eventId, writing the app's inbox): the app's side of the multi-process
 * event tests.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { consumer, type AppEvent } from '../../examples/events-consumer/handler.js';
import { rulesFromTemplate, startBusStandin, type BusStandin } from '../../local/bus-standin.js';
import type { CfnTemplate } from '../../local/template.js';

export function startConsumerBus(
  template: CfnTemplate,
  ids: { bus: string; consumer: string },
  tables: { idempotency: string; inbox: string },
  client: DynamoDBClient,
): Promise<BusStandin> {
  const consume = consumer({ idempotencyTable: tables.idempotency, inboxTable: tables.inbox, client });
  const context = { getRemainingTimeInMillis: () => 30_000, functionName: 'consumer', awsRequestId: 'local' };
  return startBusStandin({
    rules: rulesFromTemplate(template, ids.bus),
    targets: { [ids.consumer]: async (event) => void (await consume(event as unknown as AppEvent, context)) },
    retries: 8,
  });
}
