/**
 * The outbox's record logic (src/runtime/outbox.ts): what makes an
 * event deliverable, EventBridge's entry size, and the conditional put each event becomes.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_EVENT_ENTRY_BYTES,
  OutboxEventError,
  detailText,
  entryBytes,
  outboxKey,
  outboxPuts,
  validateEvent,
  validateSource,
} from '@contest-sync/scheduled-singleton';

const settings = { table: 'outbox', source: 'contest-sync.contests', retentionDays: 7 };
const context = { runId: 'run-1', fence: 3, nowMs: Date.UTC(2026, 11, 1, 10, 0, 0) };
const event = {
  id: 'contest-rescheduled#2051#1767200000',
  detailType: 'ContestRescheduled',
  detail: { contestId: 2051, from: 1767196400, to: 1767200000 },
};

const refusal = (run: () => unknown): OutboxEventError => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(OutboxEventError);
    return error as OutboxEventError;
  }
  throw new Error('expected an OutboxEventError');
};

describe('outboxPuts', () => {
  it('turns each event into a put of <source>#<id>, conditional on the key not existing, with eventId in the detail', () => {
    const [put] = outboxPuts([event], settings, context);
    expect(put).toEqual({
      Put: {
        TableName: 'outbox',
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': 'pk' },
        Item: {
          pk: `contest-sync.contests#${event.id}`,
          eventId: event.id,
          source: 'contest-sync.contests',
          detailType: 'ContestRescheduled',
          detail: JSON.stringify({ eventId: event.id, contestId: 2051, from: 1767196400, to: 1767200000 }),
          createdAtMs: context.nowMs,
          runId: 'run-1',
          fence: 3,
          ttl: context.nowMs / 1000 + 7 * 86_400,
        },
      },
    });
  });

  it('gives the same change the same item key whatever run writes it', () => {
    const a = outboxPuts([event], settings, context)[0]!.Put!.Item!;
    const b = outboxPuts([{ ...event, detail: { ...event.detail } }], settings, {
      runId: 'run-2',
      fence: 4,
      nowMs: context.nowMs + 60_000,
    })[0]!.Put!.Item!;
    expect(a.pk).toBe(b.pk);
    expect(outboxKey('contest-sync.contests', event.id)).toBe(a.pk);
  });

  it('refuses two events with one id in one commit, and checks every event before returning any', () => {
    expect(refusal(() => outboxPuts([event, { ...event }], settings, context)).message).toMatch(/appears twice in one commit/);
    const big = { id: 'big', detailType: 'Big', detail: { text: 'x'.repeat(MAX_EVENT_ENTRY_BYTES) } };
    const error = refusal(() => outboxPuts([event, big], settings, context));
    expect(error.eventId).toBe('big');
  });
});

describe('validateEvent', () => {
  it('accepts an entry of exactly 256 KB and refuses one byte more, by EventBridge’s size rule', () => {
    const source = settings.source;
    const overhead = entryBytes({ source, detailType: 'T', detail: JSON.stringify({ eventId: 'e', text: '' }) });
    const fits = { id: 'e', detailType: 'T', detail: { text: 'a'.repeat(MAX_EVENT_ENTRY_BYTES - overhead) } };
    expect(entryBytes({ source, detailType: 'T', detail: validateEvent(fits, source) })).toBe(MAX_EVENT_ENTRY_BYTES);
    const over = { ...fits, detail: { text: `${fits.detail.text}a` } };
    expect(refusal(() => validateEvent(over, source)).message).toMatch(/262145 bytes, above the 262144-byte limit/);
  });

  it('counts UTF-8 bytes, not characters', () => {
    expect(entryBytes({ source: 'é', detailType: 'ü', detail: '€' })).toBe(14 + 2 + 2 + 3);
  });

  it.each([
    ['an empty id', { id: '', detailType: 'T', detail: {} }, /event id must be/],
    ['an id with a newline', { id: 'a\nb', detailType: 'T', detail: {} }, /event id must be/],
    ['an id of 257 bytes', { id: 'x'.repeat(257), detailType: 'T', detail: {} }, /event id must be 1-256 bytes/],
    ['an empty detailType', { id: 'e', detailType: '', detail: {} }, /detailType must be/],
    ['a detailType of 129 characters', { id: 'e', detailType: 'T'.repeat(129), detail: {} }, /detailType must be 1-128/],
    ['an array detail', { id: 'e', detailType: 'T', detail: [] }, /detail must be a JSON object/],
    ['a null detail', { id: 'e', detailType: 'T', detail: null }, /detail must be a JSON object/],
    ['another eventId in the detail', { id: 'e', detailType: 'T', detail: { eventId: 'other' } }, /detail.eventId is set by the package/],
    ['a BigInt in the detail', { id: 'e', detailType: 'T', detail: { n: 10n } }, /detail is not JSON/],
  ] as const)('refuses %s with a clear error', (_name, bad, message) => {
    expect(refusal(() => validateEvent(bad as never, settings.source)).message).toMatch(message);
  });

  it('accepts a detail that already carries its own id as eventId', () => {
    expect(JSON.parse(detailText({ id: 'e', detailType: 'T', detail: { eventId: 'e', a: 1 } }))).toEqual({ eventId: 'e', a: 1 });
  });
});

describe('validateSource', () => {
  it('refuses an empty source and the reserved aws. prefix', () => {
    expect(refusal(() => validateSource('')).message).toMatch(/event source must be/);
    expect(refusal(() => validateSource('aws.events')).message).toMatch(/reserved/);
    expect(validateSource('contest-sync.reminders')).toBe('contest-sync.reminders');
  });
});
