/**
 * ConsoleTestEvents on its own: a schema per function in the `lambda-testevent-schemas` registry
 * (one provider for all), the events it refuses at synth, and ScheduledSingletonJob's
 * `consoleTestEvents` (off unless given).
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { ConsoleTestEvents, ConsoleTestEventsError, ScheduledSingletonJob } from '@contest-sync/scheduled-singleton/cdk';

describe('ConsoleTestEvents on its own', () => {
  const stackWith = (build: (stack: Stack, fn: (id: string) => lambda.Function) => void): Template => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Events');
    const fn = (id: string) =>
      new lambda.Function(stack, id, {
        runtime: lambda.Runtime.NODEJS_22_X,
        handler: 'index.handler',
        code: lambda.Code.fromInline('exports.handler=async()=>({})'),
      });
    build(stack, fn);
    return Template.fromStack(stack);
  };

  it('gives each function its schema; the functions share one provider, role and registry ensure per function', () => {
    const template = stackWith((stack, fn) => {
      new ConsoleTestEvents(stack, 'A', { function: fn('FnA'), events: { one: { a: 1 } } });
      new ConsoleTestEvents(stack, 'B', { function: fn('FnB'), events: { two: { b: 2 }, three: [] } });
    });
    template.resourceCountIs('AWS::EventSchemas::Schema', 2);
    template.resourceCountIs('Custom::LambdaTestEventRegistry', 2);
    template.resourceCountIs('AWS::IAM::Role', 3); // two functions' and the provider's
    template.hasResourceProperties('AWS::EventSchemas::Schema', {
      SchemaName: { 'Fn::Join': ['', ['_', { Ref: Match.stringLikeRegexp('^FnB') }, '-schema']] },
      Content: JSON.stringify({
        openapi: '3.0.0',
        info: { version: '1.0.0', title: 'Event' },
        paths: {},
        components: { schemas: { Event: { type: 'object' } }, examples: { two: { value: { b: 2 } }, three: { value: [] } } },
      }),
    });
  });

  it('refuses no events, names the console cannot show, payloads that are not JSON, and more than a schema holds', () => {
    const build = (events: Record<string, unknown>) => () =>
      stackWith((stack, fn) => new ConsoleTestEvents(stack, 'E', { function: fn('Fn'), events }));
    expect(build({})).toThrow(ConsoleTestEventsError);
    expect(build({ 'has space': {} })).toThrow(/event name "has space"/);
    expect(build({ 'a-name-longer-than-25-chars': {} })).toThrow(/1-25/);
    expect(build({ fn: () => 1 })).toThrow(/not JSON/);
    expect(build({ big: 'x'.repeat(100_000) })).toThrow(/at most 100000/);
  });

  it('is off in ScheduledSingletonJob unless consoleTestEvents is given', () => {
    const entry = new URL('../fixtures/job.ts', import.meta.url).pathname;
    const job = (consoleTestEvents?: Record<string, unknown>) =>
      stackWith((stack) => {
        new ScheduledSingletonJob(stack, 'Beat', {
          entry,
          schedule: events.Schedule.rate(Duration.minutes(5)),
          periodMinutes: 5,
          leaseKey: 'lease#beat',
          runRecordPrefix: 'run#beat#',
          metrics: { namespace: 'Jobs', service: 'beat' },
          ...(consoleTestEvents === undefined ? {} : { consoleTestEvents }),
        });
      });
    job().resourceCountIs('AWS::EventSchemas::Schema', 0);
    job({ beat: {} }).resourceCountIs('AWS::EventSchemas::Schema', 1);
  });
});
