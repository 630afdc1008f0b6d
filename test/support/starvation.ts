/**
 * Times a piece of work run in this process, with how long the process waited for a CPU meanwhile
 * (starvation-probe.mjs: the main thread's run-queue wait). A test that bounds the time its own
 * work takes holds the product to the bound on the time it had the CPU — `elapsed − waited` —, so
 * a machine busy with other work never decides the verdict, and an idle one (waited ≈ 0) holds it
 * to the bound as written.
 */
import { startStarvationProbe } from './starvation-probe.mjs';

export interface Timed<T> {
  value: T;
  elapsedMs: number;
  /** How long this process's main thread waited for a CPU while the work ran. */
  waitedMs: number;
  /** `elapsedMs − waitedMs`: the time the work had the CPU (or waited on I/O) — what a bound holds. */
  ownMs: number;
}

export async function timed<T>(work: () => Promise<T>): Promise<Timed<T>> {
  const probe = startStarvationProbe({ everyMs: 20 });
  const began = Date.now();
  try {
    const value = await work();
    const elapsedMs = Date.now() - began;
    probe.stop();
    const waitedMs = probe.totals().waitMs;
    return { value, elapsedMs, waitedMs, ownMs: Math.max(0, elapsedMs - waitedMs) };
  } finally {
    probe.stop();
  }
}
