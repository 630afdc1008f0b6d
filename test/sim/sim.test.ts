/**
 * The simulated year, shortened: 30 simulated days of the real handler (createHandler, virtual
 * clock) against the run's DynamoDB Local with the template's tables (docs/simulation.md), and a
 * short run with the plausibility guards switched off that the checker must catch.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { HARMFUL_GLITCHES } from './glitches.js';
import { runSimulation, type SimWorld } from './runner.js';

const world = (): SimWorld => ({ dynamoEndpoint: inject('dynamoEndpoint'), template: JSON.parse(readFileSync(inject('templatePath'), 'utf8')) as unknown });

describe('a simulated month', () => {
  it('30 days: no violations, every expected reminder fired once on time, none for a withdrawn contest', { timeout: 240_000 }, async () => {
    const report = await runSimulation(world(), { seed: 1, days: 30 });
    expect(report.intervals).toBe(720);
    expect(report.violations).toEqual([]);
    expect(report.violationsTotal).toBe(0);
    expect(report.reminders.expected).toBeGreaterThan(0);
    expect(report.reminders.duplicate).toBe(0);
    expect(report.reminders.forWithdrawn).toBe(0);
    expect(report.reminders.onTime).toBe(report.reminders.expected);
    expect(report.syncs).toBeGreaterThan(600);
  });

  it('a week of harmful replies with the plausibility guards off reports reminder violations', { timeout: 120_000 }, async () => {
    const report = await runSimulation(world(), { seed: 2, days: 7, glitchRates: HARMFUL_GLITCHES, alwaysRepeatHarmful: true, broken: 'plausibility' });
    expect(report.intervals).toBe(168);
    const reminderViolations = ['reminder-missed', 'reminder-early', 'reminder-duplicate'] as const;
    expect(reminderViolations.reduce((n, key) => n + (report.violationsByInvariant[key] ?? 0), 0)).toBeGreaterThan(0);
  });
});
