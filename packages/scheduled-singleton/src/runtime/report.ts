/**
 * What a run leaves behind: log lines and one EMF metrics line, written to stdout directly (as
 * Powertools does), never through `console`. With the JSON log format the construct sets, Lambda's
 * Node.js runtime wraps every `console` line in a JSON object with the text in `message`, and
 * CloudWatch extracts metrics only from a top-level `_aws`: an EMF line printed with console.log
 * would reach no alarm. A line written to stdout directly stays as it is.
 */
import { METRIC, METRIC_UNIT, SERVICE_DIMENSION, type MetricName } from '../contract.js';

export type Write = (line: string) => void;

/** One line on stdout, bypassing the runtime's `console`. */
export const writeStdout: Write = (line) => {
  process.stdout.write(`${line}\n`);
};

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
const LEVELS: Record<LogLevel, number> = { DEBUG: 0, INFO: 1, WARN: 2, ERROR: 3 };

export interface JobLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Structured JSON log lines (`level`, `message`, `timestamp`, `service`, then the fields). */
export function jsonLogger(options: {
  write: Write;
  service: string | undefined;
  level: LogLevel;
  now: () => number;
  keys?: () => Record<string, unknown>;
}): JobLogger {
  const line =
    (level: LogLevel) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      if (LEVELS[level] < LEVELS[options.level]) return;
      const head = {
        level,
        message,
        timestamp: new Date(options.now()).toISOString(),
        ...(options.service !== undefined ? { service: options.service } : {}),
      };
      options.write(JSON.stringify({ ...head, ...options.keys?.(), ...fields }));
    };
  return { debug: line('DEBUG'), info: line('INFO'), warn: line('WARN'), error: line('ERROR') };
}

/** The log level: Lambda's application level filter, or Powertools', or INFO. */
export function logLevelFrom(env: Record<string, string | undefined>): LogLevel {
  const named = (env.POWERTOOLS_LOG_LEVEL ?? env.AWS_LAMBDA_LOG_LEVEL ?? 'INFO').toUpperCase();
  return named in LEVELS ? (named as LogLevel) : named === 'TRACE' ? 'DEBUG' : 'INFO';
}

export interface RunMetrics {
  outcome: 'succeeded' | 'skipped' | 'failed';
  reason?: string;
  durationMs: number;
}

/** The values of the five metrics for one run: all of them, every run (0 for what did not happen). */
export function metricValues(run: RunMetrics): Record<MetricName, number> {
  return {
    [METRIC.runSucceeded]: run.outcome === 'succeeded' ? 1 : 0,
    [METRIC.runFailed]: run.outcome === 'failed' ? 1 : 0,
    [METRIC.runSkipped]: run.outcome === 'skipped' ? 1 : 0,
    [METRIC.leaseLost]: run.outcome === 'failed' && run.reason === 'lease-lost' ? 1 : 0,
    [METRIC.duration]: run.durationMs,
  };
}

/** The run's metrics as one CloudWatch Embedded Metric Format line. */
export function emfLine(run: RunMetrics, target: { namespace: string; service: string; timestampMs: number }): string {
  const values = metricValues(run);
  return JSON.stringify({
    _aws: {
      Timestamp: target.timestampMs,
      CloudWatchMetrics: [
        {
          Namespace: target.namespace,
          Dimensions: [[SERVICE_DIMENSION]],
          Metrics: (Object.keys(values) as MetricName[]).map((Name) => ({ Name, Unit: METRIC_UNIT[Name] })),
        },
      ],
    },
    [SERVICE_DIMENSION]: target.service,
    ...values,
  });
}
