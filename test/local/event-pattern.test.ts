/**
 * The event-pattern matcher of the local stand-ins (local/event-pattern.ts) against the examples
 * of AWS's EventBridge user guide: "Creating event patterns" (the EC2 state-change event),
 * "Content filtering in event patterns" (prefix, suffix, anything-but, numeric, IP address,
 * exists, empty values, wildcard, $or) and "Arrays in event patterns".
 */
import { describe, expect, it } from 'vitest';
import { EventPatternError, matches } from '../../local/event-pattern.js';

// The guide's example event.
const ec2 = {
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': 'EC2 Instance State-change Notification',
  source: 'aws.ec2',
  account: '111122223333',
  time: '2017-12-22T18:43:48Z',
  region: 'us-west-1',
  resources: ['arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0'],
  detail: { 'instance-id': 'i-1234567890abcdef0', state: 'terminated' },
};
const withDetail = (detail: Record<string, unknown>) => ({ ...ec2, detail });

describe('event patterns (AWS documented examples)', () => {
  it('matches on source, detail-type and a nested detail field; every field must match', () => {
    const pattern = { source: ['aws.ec2'], 'detail-type': ['EC2 Instance State-change Notification'], detail: { state: ['terminated'] } };
    expect(matches(pattern, ec2)).toBe(true);
    expect(matches({ ...pattern, detail: { state: ['pending'] } }, ec2)).toBe(false);
    expect(matches({ source: ['aws.s3'] }, ec2)).toBe(false);
    expect(matches({ detail: { state: ['pending', 'terminated'] } }, ec2)).toBe(true);
  });

  it('prefix, and prefix with equals-ignore-case', () => {
    expect(matches({ time: [{ prefix: '2017-12-22' }] }, ec2)).toBe(true);
    expect(matches({ time: [{ prefix: '2017-10-02' }] }, ec2)).toBe(false);
    const service = { detail: { service: [{ prefix: { 'equals-ignore-case': 'EventB' } }] } };
    for (const name of ['EventBridge', 'EVENTBRIDGE', 'eventbus']) expect(matches(service, withDetail({ service: name }))).toBe(true);
    expect(matches(service, withDetail({ service: 'Lambda' }))).toBe(false);
  });

  it('suffix, and suffix with equals-ignore-case', () => {
    expect(matches({ FileName: [{ suffix: '.png' }] }, { FileName: 'image.png' })).toBe(true);
    expect(matches({ FileName: [{ suffix: '.png' }] }, { FileName: 'image.PNG' })).toBe(false);
    expect(matches({ detail: { FileName: [{ suffix: { 'equals-ignore-case': '.png' } }] } }, withDetail({ FileName: 'image.PNG' }))).toBe(
      true,
    );
  });

  it('anything-but: a string, a number, lists of them, a prefix, a suffix, ignoring case, a wildcard', () => {
    expect(matches({ detail: { state: [{ 'anything-but': 'initializing' }] } }, ec2)).toBe(true);
    expect(matches({ detail: { state: [{ 'anything-but': 'terminated' }] } }, ec2)).toBe(false);
    expect(matches({ detail: { 'x-limit': [{ 'anything-but': 123 }] } }, withDetail({ 'x-limit': 124 }))).toBe(true);
    expect(matches({ detail: { 'x-limit': [{ 'anything-but': 123 }] } }, withDetail({ 'x-limit': 123 }))).toBe(false);
    expect(matches({ detail: { state: [{ 'anything-but': ['stopped', 'overloaded'] }] } }, withDetail({ state: 'overloaded' }))).toBe(
      false,
    );
    expect(matches({ detail: { 'x-limit': [{ 'anything-but': [100, 200, 300] }] } }, withDetail({ 'x-limit': 150 }))).toBe(true);
    expect(matches({ detail: { state: [{ 'anything-but': { prefix: 'init' } }] } }, withDetail({ state: 'initializing' }))).toBe(false);
    expect(matches({ detail: { state: [{ 'anything-but': { prefix: 'init' } }] } }, withDetail({ state: 'running' }))).toBe(true);
    expect(matches({ detail: { FileName: [{ 'anything-but': { suffix: '.txt' } }] } }, withDetail({ FileName: 'notes.txt' }))).toBe(false);
    expect(
      matches(
        { detail: { state: [{ 'anything-but': { 'equals-ignore-case': ['Stopped', 'OverLoaded'] } }] } },
        withDetail({ state: 'STOPPED' }),
      ),
    ).toBe(false);
    expect(matches({ detail: { FilePath: [{ 'anything-but': { wildcard: '*/lib/*' } }] } }, withDetail({ FilePath: 'src/lib/a.js' }))).toBe(
      false,
    );
    expect(matches({ detail: { FilePath: [{ 'anything-but': { wildcard: '*/lib/*' } }] } }, withDetail({ FilePath: 'src/bin/a.js' }))).toBe(
      true,
    );
    // A missing field is not "anything but" a value.
    expect(matches({ detail: { missing: [{ 'anything-but': 'x' }] } }, ec2)).toBe(false);
  });

  it('numeric ranges (all comparisons must hold)', () => {
    const pattern = {
      detail: {
        'c-count': [{ numeric: ['>', 0, '<=', 5] }],
        'd-count': [{ numeric: ['<', 10] }],
        'x-limit': [{ numeric: ['=', 3.018e2] }],
      },
    };
    expect(matches(pattern, withDetail({ 'c-count': 5, 'd-count': 7, 'x-limit': 301.8 }))).toBe(true);
    expect(matches(pattern, withDetail({ 'c-count': 6, 'd-count': 7, 'x-limit': 301.8 }))).toBe(false);
    expect(matches(pattern, withDetail({ 'c-count': '5', 'd-count': 7, 'x-limit': 301.8 }))).toBe(false);
  });

  it('IP address matching (cidr)', () => {
    const pattern = { detail: { sourceIPAddress: [{ cidr: '10.0.0.0/24' }] } };
    expect(matches(pattern, withDetail({ sourceIPAddress: '10.0.0.255' }))).toBe(true);
    expect(matches(pattern, withDetail({ sourceIPAddress: '10.0.1.0' }))).toBe(false);
  });

  it('exists true and false', () => {
    expect(matches({ detail: { state: [{ exists: true }] } }, ec2)).toBe(true);
    expect(matches({ detail: { state: [{ exists: false }] } }, ec2)).toBe(false);
    expect(matches({ detail: { 'c-count': [{ exists: false }] } }, ec2)).toBe(true);
    expect(matches({ detail: { 'c-count': [{ exists: false }] } }, { source: 'x' })).toBe(true);
  });

  it('empty strings and null are values to match', () => {
    const pattern = { detail: { eventVersion: [''], responseElements: [null] } };
    expect(matches(pattern, withDetail({ eventVersion: '', responseElements: null }))).toBe(true);
    expect(matches(pattern, withDetail({ eventVersion: '', responseElements: 'x' }))).toBe(false);
    expect(matches(pattern, withDetail({ eventVersion: '' }))).toBe(false);
  });

  it('wildcard', () => {
    const pattern = { EventBusArn: [{ wildcard: 'arn:aws:events:us-east-1:*:event-bus/*' }] };
    expect(matches(pattern, { EventBusArn: 'arn:aws:events:us-east-1:123456789012:event-bus/default' })).toBe(true);
    expect(matches(pattern, { EventBusArn: 'arn:aws:events:us-west-2:123456789012:event-bus/default' })).toBe(false);
  });

  it('$or: any of the patterns', () => {
    const pattern = {
      detail: {
        $or: [
          { 'c-count': [{ numeric: ['>', 0, '<=', 5] }] },
          { 'd-count': [{ numeric: ['<', 10] }] },
          { 'x-limit': [{ numeric: ['=', 3.018e2] }] },
        ],
      },
    };
    expect(matches(pattern, withDetail({ 'c-count': 9, 'd-count': 3 }))).toBe(true);
    expect(matches(pattern, withDetail({ 'c-count': 9, 'd-count': 30, 'x-limit': 1 }))).toBe(false);
  });

  it('arrays: an event array matches when any element matches any value of the pattern', () => {
    const pattern = {
      resources: [
        'arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f',
        'arn:aws:ec2:us-east-1:111122223333:instance/i-b188560f',
        'arn:aws:ec2:us-east-1:444455556666:instance/i-b188560f',
      ],
    };
    expect(
      matches(pattern, {
        resources: ['arn:aws:ec2:us-east-1:123456789012:instance/i-b188560f', 'arn:aws:ec2:us-east-1:111122223333:instance/i-b188560f'],
      }),
    ).toBe(true);
    expect(matches(pattern, { resources: ['arn:aws:ec2:us-east-1:999999999999:instance/i-b188560f'] })).toBe(false);
  });

  it('the outbox stream filter of OutboxDelivery ({"eventName": ["INSERT"]}) on stream records', () => {
    expect(matches({ eventName: ['INSERT'] }, { eventName: 'INSERT', dynamodb: {} })).toBe(true);
    expect(
      matches({ eventName: ['INSERT'] }, { eventName: 'REMOVE', userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' } }),
    ).toBe(false);
  });

  it('refuses what it does not understand, naming it', () => {
    expect(() => matches({ detail: { state: [{ contains: 'x' }] } }, ec2)).toThrow(EventPatternError);
    expect(() => matches({ detail: { state: 'terminated' } }, ec2)).toThrow(/must be an array of values or an object/);
  });
});
