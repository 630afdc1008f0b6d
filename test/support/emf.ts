/**
 * The metrics a job emits against the metrics its stack reads: EMF lines as CloudWatch would
 * extract them (only a top-level `_aws`, as with Lambda's JSON log format), and the alarms' and
 * dashboard widgets' metrics of a synthesized template.
 */
import type { CfnTemplate } from '../../local/template.js';

/** One metric datum as CloudWatch would record it from an EMF line. */
export interface EmfDatum {
  namespace: string;
  name: string;
  unit: string | undefined;
  dimensions: Record<string, string>;
  value: number;
}

/** A metric a template reads (an alarm or a dashboard widget). */
export interface ReadMetric {
  namespace: string;
  name: string;
  dimensions: Record<string, string>;
}

/** What CloudWatch extracts from these log lines: only lines that are JSON with a top-level `_aws`. */
export function extractEmf(stdout: string): EmfDatum[] {
  const data: EmfDatum[] = [];
  for (const raw of stdout.split('\n')) {
    if (!raw.startsWith('{')) continue;
    let line: any;
    try {
      line = JSON.parse(raw);
    } catch {
      continue;
    }
    for (const directive of line?._aws?.CloudWatchMetrics ?? []) {
      for (const dimensionSet of directive.Dimensions as string[][]) {
        const dimensions = Object.fromEntries(dimensionSet.map((name) => [name, String(line[name])]));
        for (const metric of directive.Metrics as { Name: string; Unit?: string }[]) {
          data.push({ namespace: directive.Namespace, name: metric.Name, unit: metric.Unit, dimensions, value: Number(line[metric.Name]) });
        }
      }
    }
  }
  return data;
}

/** Custom-namespace metrics of the template's alarms (AWS/* ones — Lambda, SQS — are not the job's). */
export function alarmMetrics(template: CfnTemplate): ReadMetric[] {
  return Object.values(template.Resources as Record<string, any>)
    .filter(
      (r) =>
        r.Type === 'AWS::CloudWatch::Alarm' && typeof r.Properties.Namespace === 'string' && !r.Properties.Namespace.startsWith('AWS/'),
    )
    .map((r) => ({
      namespace: r.Properties.Namespace,
      name: r.Properties.MetricName,
      dimensions: Object.fromEntries((r.Properties.Dimensions ?? []).map((d: { Name: string; Value: string }) => [d.Name, d.Value])),
    }));
}

/** Custom-namespace metrics of the template's dashboard widgets. */
export function widgetMetrics(template: CfnTemplate): ReadMetric[] {
  const read: ReadMetric[] = [];
  for (const r of Object.values(template.Resources as Record<string, any>)) {
    if (r.Type !== 'AWS::CloudWatch::Dashboard') continue;
    const bodyParts = r.Properties.DashboardBody['Fn::Join']?.[1] ?? [r.Properties.DashboardBody];
    const body = JSON.parse(bodyParts.map((part: unknown) => (typeof part === 'string' ? part : 'TOKEN')).join(''));
    for (const widget of body.widgets ?? []) {
      for (const row of widget.properties?.metrics ?? []) {
        const [namespace, name, ...rest] = row.filter((cell: unknown) => typeof cell === 'string') as string[];
        if (namespace === undefined || name === undefined || namespace.startsWith('AWS/') || namespace === '.') continue;
        const dimensions: Record<string, string> = {};
        for (let i = 0; i + 1 < rest.length; i += 2) dimensions[rest[i]!] = rest[i + 1]!;
        read.push({ namespace, name, dimensions });
      }
    }
  }
  return read;
}

/** `read` metrics that no datum in `emitted` feeds (same namespace, name and dimensions). */
export function unfed(read: readonly ReadMetric[], emitted: readonly EmfDatum[]): ReadMetric[] {
  const key = (m: { namespace: string; name: string; dimensions: Record<string, string> }) =>
    JSON.stringify([m.namespace, m.name, Object.entries(m.dimensions).sort()]);
  const fed = new Set(emitted.map(key));
  return read.filter((m) => !fed.has(key(m)));
}
