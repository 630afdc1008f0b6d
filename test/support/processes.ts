/**
 * Runs the bundled function in child processes (one process = one Lambda invocation), so that
 * tests and the chaos runner exercise the deployed artifact under real concurrency and signals,
 * on the Lambda runtime's Node (lambda-node.ts), not on the Node running the tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RunSummary } from '../../lambda/sync/summary.js';
import { lambdaNode } from './lambda-node.js';

const RUNNER = fileURLToPath(new URL('./invoke-bundle.mjs', import.meta.url));

export interface InvocationOutcome {
  ok: boolean;
  result?: RunSummary;
  error?: { name?: string; message?: string; summary?: RunSummary };
  /** The summary whether returned or carried by the thrown error. */
  summary?: RunSummary;
  logs: Record<string, unknown>[];
  /** The child's `process.version`, as it reported it with its result (absent if it printed none: killed, crashed). */
  node?: string;
  stdout: string;
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningInvocation {
  child: ChildProcess;
  done: Promise<InvocationOutcome>;
  /** Resolves once the invocation has logged a line matching `predicate`. */
  waitForLog(predicate: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

export function invokeBundle(options: {
  entry: string;
  event: unknown;
  env: Record<string, string>;
  timeoutMs?: number;
}): RunningInvocation {
  const child = spawn(lambdaNode().path, [RUNNER, options.entry, JSON.stringify(options.event), String(options.timeoutMs ?? 120_000)], {
    env: {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const logs: Record<string, unknown>[] = [];
  const waiters: { predicate: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }[] = [];
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    stdout += text;
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const raw of lines) {
      if (!raw.startsWith('{')) continue;
      try {
        const line = JSON.parse(raw) as Record<string, unknown>;
        logs.push(line);
        for (const waiter of [...waiters]) {
          if (waiter.predicate(line)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
      } catch {
        // not a log line
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<InvocationOutcome>((resolve) => {
    child.on('close', (code, signal) => {
      const marker = stdout.lastIndexOf('@@RESULT ');
      let parsed: Pick<InvocationOutcome, 'ok' | 'result' | 'error' | 'node'> = { ok: false };
      if (marker >= 0) {
        parsed = JSON.parse(stdout.slice(marker + '@@RESULT '.length).split('\n')[0] ?? '{}') as typeof parsed;
      }
      const summary = parsed.result ?? parsed.error?.summary;
      resolve({ ...parsed, ...(summary !== undefined ? { summary } : {}), logs, stdout, stderr, code, signal });
    });
  });
  return {
    child,
    done,
    waitForLog(predicate, timeoutMs = 30_000) {
      const seen = logs.find(predicate);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching log line within ${timeoutMs} ms\n${stdout}\n${stderr}`)), timeoutMs);
        waiters.push({
          predicate,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
  };
}

export function scheduledEvent(time: string): Record<string, unknown> {
  return {
    version: '0',
    id: `evt-${time}`,
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time,
    region: 'us-east-1',
    resources: ['arn:aws:events:us-east-1:000000000000:rule/ContestSync-Hourly'],
    detail: {},
  };
}
