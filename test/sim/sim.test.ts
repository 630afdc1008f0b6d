/**
 * The simulated year, shortened: 30 simulated days of the real handler (createHandler, virtual
 * clock) and the real reminder delivery job (createDeliveryHandler, every virtual minute) against
 * the run's DynamoDB Local with the template's tables (docs/simulation.md), with wrong-upstream
 * episodes up to 6 hours, several lies at once, honest churn close to the start and between two
 * syncs, and clock skew between the functions; the app's users change, cancel and set again their
 * reminders at any moment (during the sync's reads and commit too) and receive `ReminderDue` events
 * (the outbox's stream, the package's relay, a bus that duplicates and delays), and each intent is
 * judged on what its user received. Then what the checker must catch: a week with the
 * plausibility guards and the sync's firing rule switched off, and two days of an app whose
 * consumer dedupes on EventBridge's envelope id instead of `detail.eventId`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { HARMFUL_GLITCHES } from './glitches.js';
import { runSimulation, type SimWorld } from './runner.js';

const world = (): SimWorld => ({
  dynamoEndpoint: inject('dynamoEndpoint'),
  template: JSON.parse(readFileSync(inject('templatePath'), 'utf8')) as unknown,
});

const reminderViolations = ['reminder-missed', 'reminder-early', 'reminder-duplicate', 'reminder-late', 'reminder-withdrawn'] as const;

describe('a simulated month', () => {
  it(
    '30 days: no violation of the promise; every expected reminder received once, none early, none for a withdrawn contest',
    { timeout: 300_000 },
    async () => {
      const report = await runSimulation(world(), { seed: 1, days: 30, sources: ['codeforces'] });
      expect(report.intervals).toBe(720);
      // The generator is not tuned to the model: episodes of 3+ hours and near-start churn happen.
      expect(report.wrongUpstreamHours).toBeGreaterThan(20);
      // The product's delivery job every virtual minute (a minute the sync's retries overran is
      // covered by the next); what the users received came through the stream, the relay and a
      // bus that re-sent and duplicated, and the consumer dropped every second copy.
      expect(report.delivery.minutes).toBeGreaterThanOrEqual(720 * 59);
      expect(report.delivery.counts.delivered).toBeGreaterThan(30);
      expect(report.events.relayRepeats + report.events.busDuplicates).toBeGreaterThan(0);
      expect(report.events.deduped).toBe(report.events.deliveries - report.events.handled);
      // The consumer handles each ReminderDue once, and each contest event once.
      const contestEvents = Object.values(report.contestEvents.received).reduce((a, b) => a + b, 0);
      expect(report.events.handled).toBe((report.delivery.counts.delivered ?? 0) + contestEvents);
      expect(report.contestEvents.repeated).toBe(0);
      expect(report.contestEvents.received.ContestAnnounced).toBeGreaterThan(0);
      expect(report.violations).toEqual([]);
      expect(report.violationsTotal).toBe(0);
      expect(report.reminders.expected).toBeGreaterThan(30);
      expect(report.reminders.missed + report.reminders.duplicate + report.reminders.early + report.reminders.forWithdrawn).toBe(0);
      expect(report.reminders.onTime + report.reminders.lateExcused).toBe(report.reminders.expected);
      expect(report.storageByMonth[0]!.reminders).toBeGreaterThan(0);
      // Users changed, cancelled and set again their reminders, also while a sync read or committed
      // (docs/simulation.md, "The app"); each intent was judged on its own.
      expect(report.app.fickle.change).toBeGreaterThan(0);
      expect(report.app.fickle.cancel).toBeGreaterThan(0);
      expect(report.app.fickle['set-again']).toBeGreaterThan(0);
      expect(report.app.fickle['during-sync-read']).toBeGreaterThan(0);
      expect(report.app.fickle['during-sync-commit']).toBeGreaterThan(0);
      expect(report.reminders.intents).toBeGreaterThan(report.reminders.set);
      expect(report.reminders.afterCancel).toBe(0);
    },
  );

  it(
    'eight days of all four sources, each job on its own lease: every platform synced every hour, its reminders received within the promise',
    { timeout: 240_000 },
    async () => {
      const report = await runSimulation(world(), { seed: 1, days: 8 });
      expect(report.sources).toEqual(['codeforces', 'atcoder', 'codechef', 'leetcode']);
      expect(report.violations).toEqual([]);
      expect(report.violationsTotal).toBe(0);
      expect(report.reminders.expected).toBeGreaterThan(0);
      for (const platform of ['atcoder', 'codechef', 'leetcode'] as const) {
        const figures = report.platforms[platform]!;
        // Its reply read by its own client and mapping every hour: the page, the JSON list, the GraphQL answer.
        expect(figures.syncs).toBe(report.intervals);
        expect(figures.failures).toEqual({});
        expect(figures.violationsTotal).toBe(0);
        expect(figures.reminders.expected).toBeGreaterThan(0);
        expect(figures.reminders.onTime + figures.reminders.lateExcused).toBe(figures.reminders.expected);
        expect(figures.reminders.missed + figures.reminders.duplicate + figures.reminders.early + figures.reminders.forWithdrawn).toBe(0);
      }
      // CodeChef's placeholders were listed (and not scheduled) while they slid.
      expect(report.platforms.codechef!.truth.placeholders).toBeGreaterThan(0);
    },
  );

  it(
    'a week of harmful episodes with the plausibility guards and the firing rule off reports reminder violations',
    { timeout: 180_000 },
    async () => {
      const report = await runSimulation(world(), {
        seed: 2,
        days: 7,
        glitchRates: HARMFUL_GLITCHES,
        episode: 6,
        broken: 'guards-off',
        sources: ['codeforces'],
      });
      expect(report.intervals).toBe(168);
      expect(reminderViolations.reduce((n, key) => n + (report.violationsByInvariant[key] ?? 0), 0)).toBeGreaterThan(0);
    },
  );

  it(
    'an app that dedupes on the envelope id tells its users twice what the relay re-sent; deduping on detail.eventId, once',
    { timeout: 120_000 },
    async () => {
      // Lambda invokes the relay twice with every batch: each event reaches the bus twice, with two envelope ids.
      const options = { seed: 3, days: 2, eventPath: { relayRepeat: 1 }, sources: ['codeforces'] as const };
      const broken = await runSimulation(world(), { ...options, broken: 'envelope-id' });
      expect(broken.events.relayRepeats).toBeGreaterThan(0);
      expect(broken.violationsByInvariant['reminder-duplicate'] ?? 0).toBeGreaterThan(0);
      const app = await runSimulation(world(), options);
      expect(app.events.relayRepeats).toBe(broken.events.relayRepeats);
      expect(app.events.deduped).toBeGreaterThan(0);
      expect(app.violationsTotal).toBe(0);
    },
  );
});
