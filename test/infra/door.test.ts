/**
 * The door's queues and their consumers in the synthesized template (with webhooks): the feed
 * queue FIFO and deduplicated on content (an EventBridge rule feeds it), the contest events in one
 * message group; both queue consumers report batch item failures (what a batch did not finish
 * comes back alone); the relay's timeout holds a whole batch at the receiver's slowest answer, and
 * its queue hides a message six times that; the HTTP API has the route table's routes, each public
 * feed (every platform's, and all of them) without an authorizer; the API function gets the
 * stack's byDue shards.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES, PLATFORMS, PUBLIC_FEEDS } from '../../lambda/api/contract.js';
import { ALL_PLATFORMS_FEED, CONTESTS_GROUP } from '../../lambda/calendar/contract.js';
import { WEBHOOK_TIMINGS } from '../../lambda/webhooks/contract.js';
import { CONTEXT_KEYS } from '../../lib/config.js';
import { WEBHOOK_CONCURRENCY } from '../../lib/constructs/webhooks.js';
import { synthTemplate } from '../../local/template.js';

type Resources = Record<string, { Type: string; Properties: Record<string, any> }>;
let resources: Resources;

beforeAll(async () => {
  ({
    template: { Resources: resources },
  } = await synthTemplate({
    bundle: false,
    context: { [CONTEXT_KEYS.webhookUrl]: 'https://app.example.com/hooks', [CONTEXT_KEYS.dueShards]: '4' },
  }));
});

const one = (prefix: string, type: string) => {
  const found = Object.entries(resources).filter(([id, r]) => id.startsWith(prefix) && r.Type === type);
  expect(found, `${prefix} ${type}`).toHaveLength(1);
  return found[0]!;
};
const mappingOf = (queueId: string) => {
  const found = Object.values(resources).filter(
    (r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.EventSourceArn['Fn::GetAtt']?.[0] === queueId,
  );
  expect(found, `the mapping on ${queueId}`).toHaveLength(1);
  return found[0]!;
};

describe('the feed queue', () => {
  it('is FIFO, deduplicated on content, and fed the contest events in one message group', () => {
    const [queueId, queue] = one('DoorFeedQueue', 'AWS::SQS::Queue');
    expect(queue.Properties).toMatchObject({ FifoQueue: true, ContentBasedDeduplication: true });
    const [, rule] = one('DoorContestEventsToFeeds', 'AWS::Events::Rule');
    expect(rule.Properties.Targets).toEqual([
      expect.objectContaining({ Arn: { 'Fn::GetAtt': [queueId, 'Arn'] }, SqsParameters: { MessageGroupId: CONTESTS_GROUP } }),
    ]);
    expect(mappingOf(queueId).Properties).toMatchObject({ BatchSize: 10, FunctionResponseTypes: ['ReportBatchItemFailures'] });
  });
});

describe('the webhook relay', () => {
  it('takes batches it can finish, reports batch item failures, and its queue hides a message six times its timeout', () => {
    const [queueId, queue] = one('WebhooksQueue', 'AWS::SQS::Queue');
    const [, relay] = one('WebhooksRelay', 'AWS::Lambda::Function');
    expect(relay.Properties.Timeout).toBe(WEBHOOK_TIMINGS.relayTimeoutSeconds);
    expect(queue.Properties.VisibilityTimeout).toBe(WEBHOOK_TIMINGS.visibilityTimeoutSeconds);
    expect(mappingOf(queueId).Properties).toMatchObject({
      BatchSize: WEBHOOK_TIMINGS.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: WEBHOOK_CONCURRENCY },
    });
  });
});

describe('the HTTP API routes', () => {
  it('are the route table, each once: the public feed of every platform and of all of them without an authorizer', () => {
    const routes = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route');
    const keys = routes.map((r) => String(r.Properties.RouteKey)).filter((key) => key !== '$default');
    expect(keys.sort()).toEqual(API_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    const authOf = (key: string) => routes.find((r) => r.Properties.RouteKey === key)!.Properties.AuthorizationType;
    expect(PUBLIC_FEEDS.map((feed) => [feed, authOf(`GET /calendar/${feed}.ics`)])).toEqual(PUBLIC_FEEDS.map((feed) => [feed, 'NONE']));
    expect(PUBLIC_FEEDS).toEqual([...PLATFORMS, ALL_PLATFORMS_FEED]);
  });
});

describe('the HTTP API function', () => {
  it("gets the stack's DUE_SHARDS: a reminder it makes due goes to its bucket's shard, as the sync's do", () => {
    const [, fn] = one('DoorApiFunction', 'AWS::Lambda::Function');
    expect(fn.Properties.Environment.Variables.DUE_SHARDS).toBe('4');
  });
});
