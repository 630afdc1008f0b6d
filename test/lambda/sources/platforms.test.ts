/**
 * The platforms (lambda/sources/platforms.ts): each one's label, as the calendars and the API's
 * description name it, is the label its source's job goes by; every platform has one.
 */
import { describe, expect, it } from 'vitest';
import { SOURCE_JOBS } from '../../../lambda/sources/jobs.js';
import { PLATFORM_LABELS, PLATFORMS } from '../../../lambda/sources/platforms.js';

describe('the platforms', () => {
  it("label each platform as its source's job does", () => {
    expect(Object.keys(PLATFORM_LABELS).sort()).toEqual([...PLATFORMS].sort());
    expect(SOURCE_JOBS.map((job) => [job.platform, PLATFORM_LABELS[job.platform as keyof typeof PLATFORM_LABELS]])).toEqual(
      SOURCE_JOBS.map((job) => [job.platform, job.label]),
    );
    expect(SOURCE_JOBS.map((job) => job.platform).sort()).toEqual([...PLATFORMS].sort());
  });
});
