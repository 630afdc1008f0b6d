/**
 * The simulated year, shortened: 30 simulated days of the real handler (createHandler, virtual
 * clock) against the run's DynamoDB Local with the template's tables (docs/simulation.md), with
 * wrong-upstream episodes up to 6 hours and honest churn close to the start; and a week of harmful
 * episodes with the plausibility guards and the sync's firing rule switched off, which the checker
 * must catch.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { HARMFUL_GLITCHES } from './glitches.js';
import { runSimulation, type SimWorld } from './runner.js';

const world = (): SimWorld => ({ dynamoEndpoint: inject('dynamoEndpoint'), template: JSON.parse(readFileSync(inject('templatePath'), 'utf8')) as unknown });

describe('a simulated month', () => {
  it('30 days: no violation of the promise; every expected reminder fired once, none early, none for a withdrawn contest', { timeout: 300_000 }, async () => {
    const report = await runSimulation(world(), { seed: 1, days: 30 });
    expect(report.intervals).toBe(720);
    // The generator is not tuned to the model: episodes of 3+ hours and near-start churn happen.
    expect(report.wrongUpstreamHours).toBeGreaterThan(20);
    // The product's delivery job every virtual minute; the users received its events through the
    // stream, the relay and a bus that duplicated them, and the consumer deduped every duplicate.
    expect(report.delivery.minutes).toBeGreaterThanOrEqual(720 * 59);
    expect(report.delivery.counts.delivered).toBeGreaterThan(30);
    expect(report.events.busDuplicates + report.events.relayRepeats).toBeGreaterThan(0);
    expect(report.events.deduped).toBeGreaterThanOrEqual(report.events.busDuplicates + report.events.relayRepeats > 0 ? 1 : 0);
    expect(report.violations).toEqual([]);
    expect(report.violationsTotal).toBe(0);
    expect(report.reminders.expected).toBeGreaterThan(30);
    expect(report.reminders.missed + report.reminders.duplicate + report.reminders.early + report.reminders.forWithdrawn).toBe(0);
    expect(report.reminders.onTime + report.reminders.lateExcused).toBe(report.reminders.expected);
    expect(report.storageByMonth[0]!.reminders).toBeGreaterThan(0);
  });

  it('a week of harmful episodes with the plausibility guards and the firing rule off reports reminder violations', { timeout: 180_000 }, async () => {
    const report = await runSimulation(world(), { seed: 2, days: 7, glitchRates: HARMFUL_GLITCHES, episode: 6, broken: 'guards-off' });
    expect(report.intervals).toBe(168);
    const reminderViolations = ['reminder-missed', 'reminder-early', 'reminder-duplicate', 'reminder-late', 'reminder-withdrawn'] as const;
    expect(reminderViolations.reduce((n, key) => n + (report.violationsByInvariant[key] ?? 0), 0)).toBeGreaterThan(0);
  });
});
