/**
 * The relay part of @contest-sync/scheduled-singleton (`/relay`): the stream consumer that
 * OutboxDelivery deploys, delivering a job's outbox to its EventBridge bus. `outboxRelay()` makes
 * the Lambda handler (OutboxDelivery bundles this package's relay handler module); `relayBatch` is the
 * logic, with the PutEvents call injected. Imports the EventBridge client; the runtime part does not.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { RELAY_ENV, RELAY_METRIC, SERVICE_DIMENSION } from '../contract.js';
import { describe } from '../runtime/aws-errors.js';
import { RelayConfigError } from '../runtime/errors.js';
import { jsonLogger, logLevelFrom, writeStdout, type Write } from '../runtime/report.js';
import { relayBatch, type RelayDeps, type RelayEntry, type RelayOutcome, type StreamRecordLike } from './relay.js';

export { decodeRecord, PUT_EVENTS_MAX_BYTES, PUT_EVENTS_MAX_ENTRIES, relayBatch, requestsOf } from './relay.js';
/** The errors the relay throws (every one a ScheduledSingletonError). */
export { OutboxRecordError, RelayConfigError, ScheduledSingletonError } from '../runtime/errors.js';
export type { PutEventsAnswer, RelayDeps, RelayEntry, RelayOutcome, StreamRecordLike } from './relay.js';

export interface OutboxRelayOptions {
  /**
   * Sends one PutEvents request.
   * @default an EventBridgeClient's (endpoint from AWS_ENDPOINT_URL_EVENTBRIDGE, as the SDK reads it)
   */
  putEvents?: (
    entries: RelayEntry[],
  ) => Promise<{ FailedEntryCount?: number; Entries?: { EventId?: string; ErrorCode?: string; ErrorMessage?: string }[] }>;
  /** @default process.env */
  env?: Record<string, string | undefined>;
  /** @default Date.now */
  now?: () => number;
  /** @default a real timer */
  sleep?: RelayDeps['sleep'];
  /**
   * Where log and metric lines go.
   * @default stdout, bypassing `console`
   */
  write?: Write;
}

export type OutboxRelayHandler = (event: { Records?: StreamRecordLike[] }) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;

/** The relay's metrics of one batch as an EMF line (same namespace and `service` as its jobs'). */
export function relayEmfLine(outcome: RelayOutcome, target: { namespace: string; service: string; timestampMs: number }): string {
  return JSON.stringify({
    _aws: {
      Timestamp: target.timestampMs,
      CloudWatchMetrics: [
        {
          Namespace: target.namespace,
          Dimensions: [[SERVICE_DIMENSION]],
          Metrics: [
            { Name: RELAY_METRIC.delivered, Unit: 'Count' },
            { Name: RELAY_METRIC.failed, Unit: 'Count' },
            { Name: RELAY_METRIC.lag, Unit: 'Milliseconds' },
          ],
        },
      ],
    },
    [SERVICE_DIMENSION]: target.service,
    [RELAY_METRIC.delivered]: outcome.delivered,
    [RELAY_METRIC.failed]: outcome.failed,
    [RELAY_METRIC.lag]: outcome.maxLagMs,
  });
}

/** The Lambda handler of the outbox stream: one summary line and one EMF line per batch. */
export function outboxRelay(options: OutboxRelayOptions = {}): OutboxRelayHandler {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const write = options.write ?? writeStdout;
  const service = env.POWERTOOLS_SERVICE_NAME;
  const namespace = env.POWERTOOLS_METRICS_NAMESPACE;
  let client: EventBridgeClient | undefined;
  const putEvents =
    options.putEvents ??
    (async (entries: RelayEntry[]) => {
      client ??= new EventBridgeClient({});
      return client.send(new PutEventsCommand({ Entries: entries }));
    });
  return async (event) => {
    const log = jsonLogger({ write, service, level: logLevelFrom(env), now });
    const eventBusName = env[RELAY_ENV.eventBusName];
    if (eventBusName === undefined || eventBusName === '') {
      // Thrown: the whole batch is retried (and ends in the dead-letter queue) until the stack is fixed.
      throw new RelayConfigError(`${RELAY_ENV.eventBusName} is not set (OutboxDelivery sets it)`);
    }
    const records = event.Records ?? [];
    let outcome: RelayOutcome;
    try {
      outcome = await relayBatch(records, {
        putEvents,
        eventBusName,
        now,
        ...(options.sleep ? { sleep: options.sleep } : {}),
        warn: (message, fields) => log.warn(message, fields),
      });
    } catch (error) {
      log.error('relay failed', { summary: true, records: records.length, error: describe(error) });
      throw error;
    }
    const { batchItemFailures, ...counts } = outcome;
    const fields = {
      summary: true,
      records: records.length,
      ...counts,
      ...(batchItemFailures[0] ? { retryFrom: batchItemFailures[0].itemIdentifier } : {}),
    };
    if (outcome.failed > 0) log.error('delivered in part', fields);
    else log.info('delivered', fields);
    if (namespace !== undefined && service !== undefined) write(relayEmfLine(outcome, { namespace, service, timestampMs: now() }));
    return { batchItemFailures };
  };
}
