import { describe, expect, it } from 'vitest';
import { EventValidationError, intervalOf, parseEvent } from '../../../lambda/sync/invocation.js';

const scheduled = (time: unknown, extra: Record<string, unknown> = {}) => ({
  version: '0',
  id: '53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time,
  region: 'eu-west-1',
  resources: ['arn:aws:events:eu-west-1:123456789012:rule/ContestSync-Hourly'],
  detail: {},
  ...extra,
});

describe('parseEvent', () => {
  it('turns an EventBridge Scheduled Event into the hour its time falls in', () => {
    expect(parseEvent(scheduled('2026-11-29T14:59:59Z'))).toEqual({
      source: 'schedule',
      interval: '2026-11-29T14:00:00Z',
      dryRun: false,
      force: false,
    });
    expect(parseEvent(scheduled('2026-11-29T15:00:03Z')).interval).toBe('2026-11-29T15:00:00Z');
  });

  it('accepts the trigger/console event and its documented options', () => {
    expect(parseEvent({})).toEqual({ source: 'console', dryRun: false, force: false });
    expect(parseEvent({ dryRun: true })).toMatchObject({ source: 'console', dryRun: true });
    expect(parseEvent({ interval: '2026-11-29T14:30:00Z', force: true })).toEqual({
      source: 'console',
      interval: '2026-11-29T14:00:00Z',
      dryRun: false,
      force: true,
    });
  });

  it.each([
    ['a string', 'run please', /got a string/],
    ['a number', 42, /got a number/],
    ['an array', [{}], /got an array/],
    ['null', null, /got null/],
    ['a Scheduled Event with a bad time', scheduled('yesterday'), /invalid Scheduled Event: time: must be an ISO-8601/],
    ['a Scheduled Event with no time', scheduled(undefined), /time/],
    ['a Scheduled Event with an unknown field', scheduled('2026-11-29T14:00:00Z', { extra: 1 }), /unknown field\(s\) "extra"/],
    ['a console event with an unknown field', { dryrun: true }, /invalid console event: unknown field\(s\) "dryrun"/],
    ['a console event with a wrong type', { dryRun: 'yes' }, /dryRun: must be true or false/],
    ['force without interval', { force: true }, /needs "interval"/],
    ['a wrong source', { source: 'aws.s3', 'detail-type': 'Scheduled Event', time: '2026-11-29T14:00:00Z' }, /source/],
  ])('refuses %s with an error that names the problem', (_name, event, message) => {
    expect(() => parseEvent(event)).toThrow(EventValidationError);
    expect(() => parseEvent(event)).toThrow(message);
  });
});

describe('parseEvent refuses the future', () => {
  const nowMs = Date.parse('2026-11-29T14:10:00Z');

  it('accepts a tick up to 5 minutes ahead (clock skew) and refuses one further ahead, naming it', () => {
    expect(parseEvent(scheduled('2026-11-29T14:15:00Z'), { nowMs }).interval).toBe('2026-11-29T14:00:00Z');
    expect(() => parseEvent(scheduled('2026-11-29T15:00:00Z'), { nowMs })).toThrow(EventValidationError);
    expect(() => parseEvent(scheduled('2026-11-29T15:00:00Z'), { nowMs })).toThrow(
      /time: 2026-11-29T15:00:00Z is 50 minutes in the future \(at most 5 allowed\)/,
    );
  });

  it('accepts the current or a past console interval and refuses one that has not started', () => {
    expect(parseEvent({ interval: '2026-11-29T14:59:00Z' }, { nowMs }).interval).toBe('2026-11-29T14:00:00Z');
    expect(() => parseEvent({ interval: '2026-11-29T15:00:00Z', force: true }, { nowMs })).toThrow(
      /interval: 2026-11-29T15:00:00Z has not started yet/,
    );
  });
});

describe('intervalOf', () => {
  it('floors to the schedule period', () => {
    expect(intervalOf('2026-11-29T14:44:00Z', 30)).toBe('2026-11-29T14:30:00Z');
    expect(intervalOf('2026-11-29T14:44:00+02:00', 60)).toBe('2026-11-29T12:00:00Z');
  });
});

describe('invokedThroughVersion', () => {
  it('is true for a qualified (published version) ARN only', async () => {
    const { invokedThroughVersion } = await import('@contest-sync/scheduled-singleton');
    expect(invokedThroughVersion('arn:aws:lambda:eu-west-1:123456789012:function:ContestSync-Sync:12')).toBe(true);
    expect(invokedThroughVersion('arn:aws:lambda:eu-west-1:123456789012:function:ContestSync-Sync')).toBe(false);
    expect(invokedThroughVersion('arn:aws:lambda:eu-west-1:123456789012:function:ContestSync-Sync:live')).toBe(false);
    expect(invokedThroughVersion(undefined)).toBe(false);
  });
});
