/**
 * Powertools Logger and Metrics inside the work, as the package README shows them: on stdout next
 * to the wrapper's own lines, each line written once; the wrapper's summary line and its EMF line
 * (the five metrics) stay one each; the job's EMF line carries only the job's metric, under the
 * same namespace and `service` dimension (the construct's POWERTOOLS_* variables); the job's log
 * lines carry the run's keys.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRIC, scheduledSingleton } from '@contest-sync/scheduled-singleton';
import { jobEnv, scheduledTick, testJob } from '@contest-sync/scheduled-singleton/testing';

afterEach(() => vi.restoreAllMocks());

describe('Powertools Logger and Metrics inside the work', () => {
  it('add their own lines beside the wrapper’s one summary and one EMF line, without duplicates or shared metric names', async () => {
    // As in Lambda: the construct's variables are set before the module creates them.
    Object.assign(process.env, jobEnv({ namespace: 'Reports', service: 'report' }));
    const logger = new Logger();
    const metrics = new Metrics();
    const handler = scheduledSingleton(async ({ runId, source, interval, commit }) => {
      logger.appendKeys({ runId, source, interval });
      try {
        await commit([{ Put: { TableName: 'reports', Item: { pk: `report#${interval}` } } }], { final: true });
        metrics.addMetric('ReportsWritten', MetricUnit.Count, 1);
        logger.info('report written', { pk: `report#${interval}` });
        return { written: 1 };
      } finally {
        if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
        logger.resetKeys();
      }
    });
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(
        ...String(chunk)
          .split('\n')
          .filter((line) => line !== ''),
      );
      return true;
    });
    const job = testJob(handler, { namespace: 'Reports', service: 'report', print: true });
    const run = await job.invoke(scheduledTick());
    const again = await job.invoke(scheduledTick(Date.now() - 5 * 60_000));
    vi.restoreAllMocks();

    expect([run.result.outcome, again.result.outcome]).toEqual(['succeeded', 'succeeded']);
    const lines = out.map((line) => JSON.parse(line) as Record<string, any>);
    expect(new Set(out).size).toBe(out.length); // no line written twice
    const summaries = lines.filter((line) => line.summary === true);
    const emf = lines.filter((line) => line._aws !== undefined);
    const names = (line: Record<string, any>) => line._aws.CloudWatchMetrics[0].Metrics.map((m: { Name: string }) => m.Name).sort();
    const wrapperEmf = emf.filter((line) => names(line).includes(METRIC.runSucceeded));
    const jobEmf = emf.filter((line) => !names(line).includes(METRIC.runSucceeded));
    expect(summaries).toHaveLength(2);
    expect(wrapperEmf).toHaveLength(2);
    expect(jobEmf).toHaveLength(2);
    for (const line of jobEmf) {
      expect(names(line)).toEqual(['ReportsWritten']);
      expect(line._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'Reports', Dimensions: [['service']] });
      expect(line.service).toBe('report');
    }
    for (const line of wrapperEmf)
      expect(line._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'Reports', Dimensions: [['service']] });
    // The job's log lines carry the run's keys; the keys do not leak into the next run.
    const written = lines.filter((line) => line.message === 'report written');
    expect(written.map((line) => line.runId)).toEqual([run.result.runId, again.result.runId]);
    expect(written.map((line) => line.service)).toEqual(['report', 'report']);
    expect(written[1]?.interval).toBe(again.result.interval);
    // Nothing else: no Powertools warning (no empty publish), no stray console line.
    expect(lines.length).toBe(summaries.length + emf.length + written.length);
  });
});
