/**
 * What the package's constructs share about their functions: how the adopter's project is found,
 * how esbuild bundles a function, and the metrics a function emits as EMF. Both ScheduledSingletonJob
 * and OutboxDelivery import it; it imports neither.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { SERVICE_DIMENSION } from '../contract.js';

/** Lock files NodejsFunction understands, nearest first when looking up from the entry. */
export const LOCK_FILES = ['package-lock.json', 'yarn.lock', 'pnpm-lock.yaml', 'bun.lockb', 'bun.lock'] as const;

/**
 * The adopter's project: the nearest folder above `entry` with a lock file (or, failing that, the
 * current directory's). Never this package's own folder: it ships no lock file.
 */
export function findProject(entry: string): { projectRoot: string; depsLockFilePath: string } | undefined {
  for (const start of [dirname(resolve(entry)), process.cwd()]) {
    for (let dir = start; ; dir = dirname(dir)) {
      const lock = LOCK_FILES.map((name) => join(dir, name)).find((path) => existsSync(path));
      if (lock !== undefined) return { projectRoot: dir, depsLockFilePath: lock };
      if (dirname(dir) === dir) break;
    }
  }
  return undefined;
}

/** An ESM bundle has no `require`; some CommonJS dependencies inside the bundle still call it. */
export const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** How esbuild bundles a job's function (a build of your own with the same settings gets the same bundle). */
export const BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node22',
  minify: true,
  sourceMap: true,
  // Stack traces map back to the .ts sources; the sources themselves need not ship.
  sourcesContent: false,
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  externalModules: [],
  forceDockerBundling: false,
} as const satisfies BundlingOptions;

/** A metric a construct's function emits as EMF: its namespace, dimension `service` = its service. */
export function serviceMetric(
  metrics: { namespace: string; service: string },
  metricName: string,
  statistic: string,
  period: Duration,
  label?: string,
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: metrics.namespace,
    metricName,
    dimensionsMap: { [SERVICE_DIMENSION]: metrics.service },
    statistic,
    period,
    ...(label === undefined ? {} : { label }),
  });
}

/** An alarm on a count: in alarm from the first one in a period; no data (nothing happened) is fine. */
export const AT_LEAST_ONE = {
  threshold: 1,
  comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
  evaluationPeriods: 1,
  treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
} as const;
