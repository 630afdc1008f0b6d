/**
 * A local EventBridge bus (EventBridge does not run here): an HTTP server that answers the
 * `PutEvents` calls of the AWS SDK (JSON 1.1 protocol, `AWS_ENDPOINT_URL_EVENTBRIDGE`), wraps each
 * entry in the envelope EventBridge gives it (a new `id` per entry), and delivers it to the
 * targets of the rules that match it. The rules come from the synthesized template
 * (`AWS::Events::Rule` on the bus: EventPattern, and each target with its SqsParameters and
 * dead-letter queue), matched by local/event-pattern.ts. What it refuses, and where AWS says so:
 *
 *   - Amazon EventBridge API Reference — PutEvents
 *     https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html
 *     1 to 10 entries; an entry without Source, DetailType or Detail is refused (InvalidArgument),
 *     a Detail that is not a JSON object too (MalformedDetail), each in `FailedEntryCount`.
 *   - Amazon EventBridge User Guide — Calculating Amazon EventBridge PutEvents event entry size
 *     https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html
 *     the entries of a request, sized as that page sizes them, within 256 KB.
 *   - Amazon EventBridge API Reference — SqsParameters
 *     https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_SqsParameters.html
 *     an SQS target gets the event with the target's MessageGroupId and no deduplication id: the
 *     queue stand-in (local/door/queue-standin.ts) then refuses what SQS refuses (a FIFO queue
 *     without content-based deduplication refuses every event).
 *   - Amazon EventBridge User Guide — Using dead-letter queues to process undelivered events
 *     https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html
 *     a delivery that still fails after its retries goes to the target's dead-letter queue.
 *
 * Like the real bus it is at least once and unordered, and both are injectable: `duplicate`
 * (the probability that a delivery is made twice), `reorder` (random delays), `failEntry` (an
 * entry answered with an ErrorCode in `FailedEntryCount`, to exercise the relay's partial
 * failures). A target that throws is retried (`retries`: a few at once, where EventBridge retries
 * with backoff for up to the target's MaximumRetryAttempts and MaximumEventAgeInSeconds), then
 * counted as failed, with the dead-letter queue it went to.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { referenced } from '../lib/wiring.js';
import { matches, type Pattern } from './event-pattern.js';

export interface BusRule {
  /** The rule's logical id in the template. */
  name: string;
  pattern: Pattern;
  /** Logical ids of its targets (the `Fn::GetAtt [id, Arn]` of each). */
  targets: string[];
  /** What the template says of a target, by its logical id: its SqsParameters and its dead-letter queue. */
  parameters?: Record<string, TargetParameters>;
}

/** A rule target's settings in the template. */
export interface TargetParameters {
  sqsParameters?: { MessageGroupId?: string };
  /** The logical id of its dead-letter queue. */
  deadLetterQueue?: string;
}

/** An event as EventBridge delivers it. */
export interface BusEvent {
  version: '0';
  id: string;
  'detail-type': string;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: Record<string, unknown>;
}

export interface BusFaults {
  /** Probability that a delivery is made twice (default 0). */
  duplicate?: number;
  /** Deliver after a random delay of up to this many ms, so that events overtake each other (default 0). */
  reorderMs?: number;
  /** An ErrorCode for the entry (by its position in the request and the request's count), or undefined to accept it. */
  failEntry?: (entry: PutEntry, request: number) => string | undefined;
  random?: () => number;
}

/** One PutEvents entry as the SDK sends it. */
export interface PutEntry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  EventBusName?: string;
  Time?: number | string;
  Resources?: string[];
}

/** A target: the event as delivered, and the target's settings (an SQS target passes its SqsParameters on to SendMessage). */
export type Target = (event: BusEvent, parameters: TargetParameters) => Promise<void>;

export interface BusStandin {
  endpoint: string;
  /** Every entry the bus accepted, as an event (in the order accepted). */
  readonly accepted: BusEvent[];
  /** Every delivery that reached a target without throwing. */
  readonly delivered: { rule: string; target: string; event: BusEvent }[];
  /** Deliveries that still failed after the retries, and the target's dead-letter queue they went to. */
  readonly failed: { rule: string; target: string; event: BusEvent; error: string; deadLetterQueue?: string }[];
  /** Entries refused with an ErrorCode (injected or invalid). */
  readonly refused: { entry: PutEntry; code: string }[];
  requests: number;
  setFaults(faults: BusFaults): void;
  /** Resolves once every delivery started so far has settled. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

/** The rules on the bus `busLogicalId` in a synthesized template, with their patterns and targets. */
export function rulesFromTemplate(template: { Resources: Record<string, CfnResource> }, busLogicalId: string): BusRule[] {
  return Object.entries(template.Resources)
    .filter(
      ([, resource]) =>
        resource.Type === 'AWS::Events::Rule' && (resource.Properties?.EventBusName as { Ref?: string } | undefined)?.Ref === busLogicalId,
    )
    .map(([name, resource]) => {
      const props = resource.Properties ?? {};
      const declared = (props.Targets as Record<string, any>[] | undefined) ?? [];
      const targets = declared.map((target) => referenced(target.Arn) ?? '');
      const parameters = Object.fromEntries(
        declared.map((target, i) => {
          const deadLetterQueue = referenced(target.DeadLetterConfig?.Arn);
          const settings: TargetParameters = {
            ...(target.SqsParameters === undefined ? {} : { sqsParameters: target.SqsParameters as { MessageGroupId?: string } }),
            ...(deadLetterQueue === undefined ? {} : { deadLetterQueue }),
          };
          return [targets[i]!, settings];
        }),
      );
      const pattern =
        typeof props.EventPattern === 'string' ? (JSON.parse(props.EventPattern) as Pattern) : (props.EventPattern as Pattern);
      if (pattern === undefined) throw new Error(`rule ${name} on the bus has no EventPattern`);
      return { name, pattern, targets, parameters };
    });
}

const MAX_ENTRIES = 10;
const MAX_REQUEST_BYTES = 256 * 1024;

/** EventBridge's checks on one entry: an ErrorCode, or undefined when it is valid. */
function invalid(entry: PutEntry): string | undefined {
  if (!entry.Source || !entry.DetailType || entry.Detail === undefined) return 'InvalidArgument';
  try {
    const detail = JSON.parse(entry.Detail) as unknown;
    if (detail === null || typeof detail !== 'object' || Array.isArray(detail)) return 'MalformedDetail';
  } catch {
    return 'MalformedDetail';
  }
  return undefined;
}

const entryBytes = (entry: PutEntry) =>
  (entry.Time !== undefined ? 14 : 0) +
  Buffer.byteLength(entry.Source ?? '') +
  Buffer.byteLength(entry.DetailType ?? '') +
  Buffer.byteLength(entry.Detail ?? '') +
  (entry.Resources ?? []).reduce((sum, r) => sum + Buffer.byteLength(r), 0);

export async function startBusStandin(options: {
  rules: BusRule[];
  targets: Record<string, Target>;
  faults?: BusFaults;
  retries?: number;
  retryDelayMs?: number;
}): Promise<BusStandin> {
  let faults: BusFaults = options.faults ?? {};
  const retries = options.retries ?? 3;
  const pending = new Set<Promise<void>>();
  const state: Omit<BusStandin, 'endpoint' | 'setFaults' | 'idle' | 'close'> = {
    accepted: [],
    delivered: [],
    failed: [],
    refused: [],
    requests: 0,
  };

  const deliver = (rule: BusRule, target: string, event: BusEvent) => {
    const run = async () => {
      const random = faults.random ?? Math.random;
      if ((faults.reorderMs ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * (faults.reorderMs ?? 0))));
      const handler = options.targets[target];
      const parameters = rule.parameters?.[target] ?? {};
      if (handler === undefined) {
        state.failed.push({ rule: rule.name, target, event, error: `no target ${target}` });
        return;
      }
      for (let attempt = 1; ; attempt += 1) {
        try {
          // Each delivery gets its own copy, as a target receives its own JSON.
          await handler(JSON.parse(JSON.stringify(event)) as BusEvent, parameters);
          state.delivered.push({ rule: rule.name, target, event });
          return;
        } catch (error) {
          if (attempt > retries) {
            const { deadLetterQueue } = parameters;
            const message = String((error as Error)?.message ?? error);
            state.failed.push({
              rule: rule.name,
              target,
              event,
              error: message,
              ...(deadLetterQueue === undefined ? {} : { deadLetterQueue }),
            });
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, (options.retryDelayMs ?? 50) * attempt));
        }
      }
    };
    const promise = run().finally(() => pending.delete(promise));
    pending.add(promise);
  };

  const route = (event: BusEvent) => {
    const random = faults.random ?? Math.random;
    for (const rule of options.rules) {
      if (!matches(rule.pattern, event)) continue;
      for (const target of rule.targets) {
        deliver(rule, target, event);
        if (random() < (faults.duplicate ?? 0)) deliver(rule, target, event);
      }
    }
  };

  const putEvents = (body: { Entries?: PutEntry[] }): { status: number; answer: unknown } => {
    const entries = body.Entries ?? [];
    state.requests += 1;
    if (entries.length === 0 || entries.length > MAX_ENTRIES) {
      return {
        status: 400,
        answer: { __type: 'ValidationException', message: `Entries must hold 1-${MAX_ENTRIES} entries, got ${entries.length}` },
      };
    }
    const total = entries.reduce((sum, entry) => sum + entryBytes(entry), 0);
    if (total > MAX_REQUEST_BYTES)
      return {
        status: 400,
        answer: { __type: 'ValidationException', message: `Total size of the entries in the request is over the limit (${total} bytes)` },
      };
    const results = entries.map((entry) => {
      const code = invalid(entry) ?? faults.failEntry?.(entry, state.requests);
      if (code !== undefined) {
        state.refused.push({ entry, code });
        return { ErrorCode: code, ErrorMessage: `entry refused (${code})` };
      }
      const time = entry.Time === undefined ? new Date() : new Date(typeof entry.Time === 'number' ? entry.Time * 1000 : entry.Time);
      const event: BusEvent = {
        version: '0',
        id: randomUUID(),
        'detail-type': entry.DetailType!,
        source: entry.Source!,
        account: '000000000000',
        time: time.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        region: 'us-east-1',
        resources: entry.Resources ?? [],
        detail: JSON.parse(entry.Detail!) as Record<string, unknown>,
      };
      state.accepted.push(event);
      route(event);
      return { EventId: event.id };
    });
    return { status: 200, answer: { FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length, Entries: results } };
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const target = String(request.headers['x-amz-target'] ?? '');
      let reply: { status: number; answer: unknown };
      if (target !== 'AWSEvents.PutEvents')
        reply = {
          status: 400,
          answer: { __type: 'UnknownOperationException', message: `the bus stand-in serves PutEvents only, not ${target}` },
        };
      else {
        try {
          reply = putEvents(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { Entries?: PutEntry[] });
        } catch (error) {
          reply = { status: 400, answer: { __type: 'SerializationException', message: String(error) } };
        }
      }
      response.writeHead(reply.status, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify(reply.answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return Object.assign(state, {
    endpoint: `http://127.0.0.1:${port}`,
    setFaults(next: BusFaults) {
      faults = next;
    },
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
