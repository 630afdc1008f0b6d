// Measures how long this process waited for a CPU: the harness's part of a run's time, which no
// product can be held to. Plain JavaScript on purpose: a chaos worker loads it before the bundle
// with `node --import` (no TypeScript loader between the test and the artifact), and the chaos
// runner and the in-process tests import it too (starvation-probe.d.mts gives TypeScript its
// types; starvation.ts times a piece of work with it).
//
// Every `everyMs` a timer reads the main thread's run-queue wait from /proc/self/schedstat (Linux:
// the time the thread was ready to run but no CPU was free, in ns) and how late the timer fired
// (its event-loop lag). The run-queue wait is the measure: it is zero on an idle machine whatever
// the process does, it grows only when other work holds the CPUs, and it does not count the
// process's own work (a run blocking its event loop lags but does not wait) nor a SIGSTOP (a
// stopped thread is not runnable). Where schedstat is missing, the lag less the process's own CPU
// time stands in for it (an upper bound: other threads' CPU time is not subtracted).
//
// Loaded with STARVATION_PROBE=stdout, it prints one line `@@STARVATION {...}` as the process exits.
import { readFileSync } from 'node:fs';

const SCHEDSTAT = '/proc/self/schedstat';
/** A tick is kept if it waited or lagged at least this long (the rest is noise: the line stays short). */
const KEEP_WAIT_MS = 10;
const KEEP_LAG_MS = 50;

function runQueueWaitMs() {
  try {
    const fields = readFileSync(SCHEDSTAT, 'utf8').trim().split(/\s+/);
    const waitNs = Number(fields[1]);
    return Number.isFinite(waitNs) ? waitNs / 1e6 : undefined;
  } catch {
    return undefined;
  }
}

function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * Starts sampling. `samples()` returns the ticks that waited or lagged (each `{ atMs, spanMs, waitMs,
 * lagMs }`: the span ending at `atMs`, epoch ms), `totals()` the whole wait since the start.
 */
export function startStarvationProbe(options = {}) {
  const everyMs = options.everyMs ?? 50;
  const source = runQueueWaitMs() === undefined ? 'lag-minus-cpu' : 'schedstat';
  const kept = [];
  const startedAtMs = Date.now();
  let lastAtMs = startedAtMs;
  let lastWait = runQueueWaitMs() ?? 0;
  let lastCpu = cpuMs();
  let waitMs = 0;
  let maxLagMs = 0;
  const tick = () => {
    const atMs = Date.now();
    const spanMs = atMs - lastAtMs;
    const lagMs = Math.max(0, spanMs - everyMs);
    const cpu = cpuMs();
    let waited;
    if (source === 'schedstat') {
      const wait = runQueueWaitMs() ?? lastWait;
      waited = Math.max(0, wait - lastWait);
      lastWait = wait;
    } else {
      waited = Math.max(0, lagMs - (cpu - lastCpu));
    }
    lastCpu = cpu;
    lastAtMs = atMs;
    waitMs += waited;
    maxLagMs = Math.max(maxLagMs, lagMs);
    if (waited >= KEEP_WAIT_MS || lagMs >= KEEP_LAG_MS) {
      kept.push({ atMs, spanMs, waitMs: Math.round(waited), lagMs: Math.round(lagMs) });
    }
  };
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return {
    source,
    samples: () => kept.slice(),
    totals: () => ({ source, sinceMs: startedAtMs, untilMs: lastAtMs, waitMs: Math.round(waitMs), maxLagMs: Math.round(maxLagMs) }),
    stop() {
      tick();
      clearInterval(timer);
    },
  };
}

if (process.env.STARVATION_PROBE === 'stdout') {
  const probe = startStarvationProbe();
  process.on('exit', () => {
    probe.stop();
    // A pipe is written synchronously on Linux: the line is out before the process is gone.
    process.stdout.write(`\n@@STARVATION ${JSON.stringify({ ...probe.totals(), samples: probe.samples() })}\n`);
  });
}
