/**
 * What one scheduled run leaves in CloudWatch, measured from the function's own output: the
 * handler (metrics on, logs at INFO as deployed) runs two scheduled intervals on fresh tables and
 * the second, steady-state run's stdout is kept (with a Lambda-like context, so the lines carry the
 * function fields Powertools adds in Lambda): its bytes (log ingestion) and the metric series
 * its EMF documents create (custom-metric charges).
 */
import { createHandler } from '../lambda/sync/handler.js';
import type { CodeforcesStandin } from '../local/codeforces-standin.js';
import type { TableNames } from '../local/tables.js';
import { captureStdout, fakeContext } from '../test/support/handler.js';
import { scheduledEvent } from '../test/support/processes.js';
import { benchClient } from '../local/counting-client.js';
import { functionEnv } from './environment.js';

export interface RunOutput {
  /** Bytes the function printed in the steady-state run (JSON log lines + EMF). */
  logBytesPerRun: number;
  logLines: number;
  /** Distinct metric series (namespace/name{dimension=value,...}) in its EMF output. */
  metricSeries: string[];
}

type EmfDocument = Record<string, unknown> & {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
};

/** Every series the EMF documents among `lines` create (pure). */
export function emfSeries(lines: Record<string, unknown>[]): string[] {
  const series = new Set<string>();
  for (const doc of lines.filter((line) => line._aws !== undefined) as EmfDocument[]) {
    for (const directive of doc._aws.CloudWatchMetrics) {
      for (const dimensions of directive.Dimensions) {
        const dims = dimensions.map((name) => `${name}=${String(doc[name])}`).join(',');
        for (const metric of directive.Metrics) series.add(`${directive.Namespace}/${metric.Name}{${dims}}`);
      }
    }
  }
  return [...series].sort();
}

export async function measureRunOutput(options: { endpoint: string; tables: TableNames; standin: CodeforcesStandin }): Promise<RunOutput> {
  const dynamo = benchClient(options.endpoint);
  try {
    const handler = createHandler({
      env: { AWS_REGION: 'us-east-1', ...functionEnv(options.tables, options.standin.baseUrl, 30) },
      dynamo: dynamo.client,
    });
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const run = async (at: number) => {
      const captured = await captureStdout(() => handler(scheduledEvent(new Date(at).toISOString()), fakeContext(60_000)));
      if (captured.error !== undefined) throw captured.error instanceof Error ? captured.error : new Error(String(captured.error));
      // Each line is compact JSON plus a newline: the same bytes, re-serialized.
      const bytes = captured.lines.reduce((sum, line) => sum + Buffer.byteLength(JSON.stringify(line)) + 1, 0);
      return { lines: captured.lines, bytes };
    };
    await run(hour - 7_200_000);
    const steady = await run(hour - 3_600_000);
    return { logBytesPerRun: steady.bytes, logLines: steady.lines.length, metricSeries: emfSeries(steady.lines) };
  } finally {
    dynamo.client.destroy();
  }
}
