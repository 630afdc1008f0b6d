/**
 * One worker = one process running the bundled function for one event (one Lambda invocation),
 * with its planned fault applied by signal: SIGKILL at a time or once it holds the lease, or
 * SIGSTOP (then SIGCONT) at a time or once it holds the lease.
 */
import type { ChildProcess } from 'node:child_process';
import { invokeBundle, scheduledEvent } from '../support/processes.js';
import type { WorkerEvent, WorkerFault } from './faults.js';
import { jsonLines, runHistory, type RunHistory, type RunSummaryLine } from './history.js';
import type { StarvationSample, StarvationTotals } from '../support/starvation-probe.mjs';

/** What the worker's starvation probe measured (starvation-probe.mjs), if the process lived to print it. */
export interface WorkerStarvation extends StarvationTotals {
  samples: StarvationSample[];
}

/**
 * Loads the starvation probe into the worker before the bundle: the process measures how long it
 * waited for a CPU, and says so as it exits. The bundle itself is untouched.
 */
const PROBE_ENV = {
  NODE_OPTIONS: `--import=${new URL('../support/starvation-probe.mjs', import.meta.url).href}`,
  STARVATION_PROBE: 'stdout',
};

/** The probe's line in a worker's stdout. */
export function starvationOf(stdout: string): WorkerStarvation | undefined {
  const marker = stdout.lastIndexOf('@@STARVATION ');
  if (marker < 0) return undefined;
  try {
    return JSON.parse(stdout.slice(marker + '@@STARVATION '.length).split('\n')[0] ?? '') as WorkerStarvation;
  } catch {
    return undefined;
  }
}

export interface WorkerControl {
  /** SIGSTOP now, SIGCONT `forMs` later. */
  stop(forMs: number): void;
}

export interface WorkerOutcome {
  history: RunHistory;
  /** The summary the handler returned or threw, whole (a delivery run's `counts`), if it got that far. */
  result?: Record<string, unknown>;
  /** Signals actually sent (a fault planned for a holder is not sent if the worker never held). */
  sent: { sigkill: boolean; sigstop: boolean };
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stderrTail: string;
}

/** Generous cap on one invocation: a worker still alive after it is killed and reported. */
const HUNG_AFTER_MS = 90_000;

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

export async function runWorker(options: {
  id: number;
  bundleEntry: string;
  event: WorkerEvent;
  fault: WorkerFault;
  env: Record<string, string>;
  /** Lambda's remaining time given to the invocation. */
  timeoutMs: number;
  /** Receives the controls of the process (for faults triggered from outside, e.g. by its proxy). */
  onSpawn?: (control: WorkerControl) => void;
  /** Called when a planned SIGKILL or SIGSTOP was actually sent. */
  onFault?: () => void;
}): Promise<WorkerOutcome & { hung: boolean }> {
  const event = options.event.kind === 'console' ? {} : scheduledEvent(options.event.interval);
  const startedAtMs = Date.now();
  const running = invokeBundle({ entry: options.bundleEntry, event, env: { ...options.env, ...PROBE_ENV }, timeoutMs: options.timeoutMs });
  const { child } = running;
  const sent = { sigkill: false, sigstop: false };
  const timers: NodeJS.Timeout[] = [];
  let exited = false;
  const signal = (name: NodeJS.Signals): boolean => {
    if (exited || !alive(child)) return false;
    return child.kill(name);
  };
  const kill = (): void => {
    if (!signal('SIGKILL')) return;
    sent.sigkill = true;
    options.onFault?.();
  };
  const stop = (forMs: number): void => {
    if (!signal('SIGSTOP')) return;
    sent.sigstop = true;
    timers.push(setTimeout(() => signal('SIGCONT'), forMs));
    options.onFault?.();
  };
  options.onSpawn?.({ stop });
  // Acts once the worker logs that it holds the lease (a worker that never holds is spared).
  const whenHolding = (delayMs: number, action: () => void): void => {
    let seen = '';
    const onData = (chunk: Buffer): void => {
      seen = (seen + chunk.toString()).slice(-4_096);
      if (!seen.includes('"message":"lease acquired"')) return;
      child.stdout?.off('data', onData);
      timers.push(setTimeout(action, delayMs));
    };
    child.stdout?.on('data', onData);
  };
  const fault = options.fault;
  if (fault.kind === 'kill') timers.push(setTimeout(kill, fault.afterMs));
  else if (fault.kind === 'kill-holder') whenHolding(fault.delayMs, kill);
  else if (fault.kind === 'stop') timers.push(setTimeout(() => stop(fault.forMs), fault.afterMs));
  else if (fault.kind === 'stop-holder') whenHolding(fault.delayMs, () => stop(fault.forMs));

  let hung = false;
  const watchdog = setTimeout(() => {
    hung = true;
    signal('SIGCONT');
    signal('SIGKILL');
  }, HUNG_AFTER_MS);
  const outcome = await running.done;
  exited = true;
  clearTimeout(watchdog);
  for (const timer of timers) clearTimeout(timer);

  const lines = [...jsonLines(outcome.stdout), ...jsonLines(outcome.stderr)];
  const summary = outcome.summary as (RunSummaryLine & { runId?: string }) | undefined;
  const history = runHistory({
    worker: options.id,
    source: options.event.kind === 'console' ? 'manual' : 'schedule',
    ...(options.event.kind === 'schedule' ? { interval: options.event.interval } : {}),
    killed: outcome.signal === 'SIGKILL',
    lines,
    ...(summary !== undefined ? { result: summary } : {}),
  });
  history.startedAtMs = startedAtMs;
  history.endedAtMs = Date.now();
  const starvation = starvationOf(outcome.stdout);
  if (starvation !== undefined) history.starvation = starvation;
  return {
    history,
    ...(outcome.summary !== undefined ? { result: outcome.summary as unknown as Record<string, unknown> } : {}),
    sent,
    exitCode: outcome.code,
    signal: outcome.signal,
    stderrTail: outcome.stderr.slice(-2_000),
    hung,
  };
}
