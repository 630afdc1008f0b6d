/** The wrapper's event rules (parseInvocation). */
import { describe, expect, it } from 'vitest';
import { booleanOption, EventValidationError, parseInvocation } from '@contest-sync/scheduled-singleton';

const nowMs = Date.parse('2026-11-30T12:07:00Z');
const parse = (event: unknown, extra: Partial<Parameters<typeof parseInvocation>[1]> = {}) =>
  parseInvocation(event, { periodMinutes: 5, nowMs, ...extra });
const tick = (time: string) => ({
  version: '0',
  id: 'e',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '1',
  time,
  region: 'us-east-1',
  resources: [],
  detail: {},
});

describe('parseInvocation', () => {
  it('a Scheduled Event stands for the period its time falls in', () => {
    expect(parse(tick('2026-11-30T12:06:59Z'))).toEqual({
      source: 'schedule',
      interval: '2026-11-30T12:05:00Z',
      dryRun: false,
      force: false,
      options: {},
    });
  });

  it('the deploy-time {} (a published version) and the console {} run without an interval', () => {
    expect(parse({}, { invokedFunctionArn: 'arn:aws:lambda:us-east-1:1:function:f:7' })).toMatchObject({ source: 'deploy', dryRun: false });
    expect(parse({}, { invokedFunctionArn: 'arn:aws:lambda:us-east-1:1:function:f' })).toMatchObject({ source: 'console' });
    expect(parse({}).interval).toBeUndefined();
  });

  it('console options: interval, force, dryRun, and the job own ones when declared', () => {
    expect(parse({ interval: '2026-11-30T11:58:00Z', force: true })).toMatchObject({
      source: 'console',
      interval: '2026-11-30T11:55:00Z',
      force: true,
    });
    expect(parse({ dryRun: true })).toMatchObject({ dryRun: true });
    expect(parse({ limit: 3 }, { consoleOptions: ['limit'] }).options).toEqual({ limit: 3 });
  });

  it('the job own options with checks: a problem refuses the event as the wrapper own do; absent options are not checked', () => {
    const consoleOptions = { acceptHeld: booleanOption, limit: (value: unknown) => (value === 3 ? undefined : 'must be 3') };
    expect(parse({ acceptHeld: true, limit: 3 }, { consoleOptions }).options).toEqual({ acceptHeld: true, limit: 3 });
    expect(parse({}, { consoleOptions }).options).toEqual({});
    expect(() => parse({ acceptHeld: 'yes' }, { consoleOptions })).toThrow(
      new EventValidationError('invalid console event: acceptHeld: must be true or false'),
    );
    expect(() => parse({ acceptHeld: 1, limit: 4, other: 0 }, { consoleOptions })).toThrow(
      'invalid console event: unknown field(s) "other"; acceptHeld: must be true or false; limit: must be 3',
    );
  });

  it.each([
    [null, /expected a JSON object/],
    [[], /got an array/],
    [{ extra: 1 }, /unknown field\(s\) "extra"/],
    [{ force: true }, /"force" re-runs a scheduled interval, so it needs "interval"/],
    [{ dryRun: 'yes' }, /dryRun: must be true or false/],
    [{ interval: '2026-11-30T12:30:00Z' }, /has not started yet/],
    [tick('yesterday'), /invalid Scheduled Event: time: must be an ISO-8601/],
    [tick('2026-11-30T12:20:00Z'), /minutes in the future/],
    [{ ...tick('2026-11-30T12:00:00Z'), source: 'me' }, /source: must be "aws.events"/],
  ])('refuses %j with a clear error', (event, message) => {
    expect(() => parse(event)).toThrow(EventValidationError);
    expect(() => parse(event)).toThrow(message);
  });
});
