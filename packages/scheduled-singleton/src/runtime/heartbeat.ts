/**
 * Keeps a held lease alive while the sync runs, and aborts the sync when the lease is gone.
 *
 * Every `renewEveryMs` it renews. A renewal DynamoDB refuses means another run owns the lease:
 * abort at once. A renewal whose outcome is unknown (timeout, network) is retried every
 * `renewRetryMs`; if none is confirmed within `renewDeadlineMs` of the last confirmed one — still
 * before the confirmed expiry — the run aborts rather than outlive its lease. A watchdog on the
 * confirmed expiry also catches a process that was frozen (GC pause, SIGSTOP) past it.
 */
import { LeaseLostError } from './errors.js';
import type { HeldLease } from './ports.js';
import type { LeaseTiming } from './timing.js';

export interface Renewer {
  renew(lease: HeldLease, signal?: AbortSignal): Promise<HeldLease>;
}

export interface HeartbeatOptions {
  renewer: Renewer;
  lease: HeldLease;
  timing: LeaseTiming;
  now: () => number;
  /**
   * No renewal is sent at or after this instant (the run's deadline): the lease then lapses on its own.
   * @default none: renews until stopped
   */
  stopAtMs?: number;
  /** Aborted with a LeaseLostError when the lease is lost. */
  controller: AbortController;
  /** @default none */
  onRenewed?: (lease: HeldLease) => void;
  /** Told of a renewal whose outcome is unknown (it is retried). @default none */
  onRenewError?: (error: unknown) => void;
}

export class Heartbeat {
  private lease: HeldLease;
  private confirmedAtMs: number;
  private timer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private stopped = false;
  private inFlight: Promise<void> | undefined;
  private renewals = 0;
  /** Aborts a renewal in flight when the heartbeat stops, so that stopping never waits on the network. */
  private readonly renewals$ = new AbortController();

  constructor(private readonly options: HeartbeatOptions) {
    this.lease = options.lease;
    this.confirmedAtMs = startOf(options.lease, options.timing);
  }

  /** The lease as last confirmed by DynamoDB. */
  get current(): HeldLease {
    return this.lease;
  }

  get count(): number {
    return this.renewals;
  }

  start(): void {
    this.armWatchdog();
    this.schedule(this.options.timing.renewEveryMs);
  }

  /**
   * Stops renewing, aborts a renewal in flight and waits for it to settle, so that release never
   * races it. (A renewal that still landed is harmless: release removes the holder it checks.)
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.watchdog);
    this.renewals$.abort();
    await this.inFlight;
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.pastStop(delayMs)) return;
    this.timer = setTimeout(() => {
      this.inFlight = this.beat();
    }, delayMs);
  }

  private async beat(): Promise<void> {
    const { renewer, timing, now, controller } = this.options;
    if (this.stopped || controller.signal.aborted || this.pastStop(0)) return;
    if (now() - this.confirmedAtMs >= timing.renewDeadlineMs) {
      this.lose(`no renewal confirmed within ${timing.renewDeadlineMs} ms`);
      return;
    }
    try {
      const renewed = await renewer.renew(this.lease, AbortSignal.any([controller.signal, this.renewals$.signal]));
      if (this.stopped) return;
      this.confirm(renewed);
      this.schedule(timing.renewEveryMs);
    } catch (error) {
      if (this.stopped || controller.signal.aborted) return;
      if (error instanceof LeaseLostError) {
        this.abort(error);
        return;
      }
      this.options.onRenewError?.(error);
      this.schedule(timing.renewRetryMs);
    }
  }

  /**
   * Renews now, in the caller's turn, if half the renewal period has passed since the last
   * confirmation: a transaction about to start calls it, so that the regular renewal does not fall
   * due while the transaction holds the lease item (it would wait the whole transaction). A
   * renewal that fails here is left to the regular one; a lost lease aborts the run.
   */
  async renewBeforeTurn(renew: (lease: HeldLease, signal: AbortSignal) => Promise<HeldLease>): Promise<void> {
    const { timing, now, controller } = this.options;
    if (this.stopped || controller.signal.aborted || this.pastStop(0)) return;
    if (now() - this.confirmedAtMs < timing.renewEveryMs / 2) return;
    try {
      const renewed = await renew(this.lease, AbortSignal.any([controller.signal, this.renewals$.signal]));
      if (this.stopped) return;
      this.confirm(renewed);
      clearTimeout(this.timer);
      this.schedule(timing.renewEveryMs);
    } catch (error) {
      if (this.stopped || controller.signal.aborted) return;
      if (error instanceof LeaseLostError) this.abort(error);
      else this.options.onRenewError?.(error);
    }
  }

  private confirm(renewed: HeldLease): void {
    this.lease = renewed;
    // Measured from when DynamoDB's expiry was computed (the request), not from the response:
    // the holder gives up no later than the store would let the lease lapse.
    this.confirmedAtMs = startOf(renewed, this.options.timing);
    this.renewals += 1;
    this.options.onRenewed?.(renewed);
    this.armWatchdog();
  }

  /** Whether a renewal `delayMs` from now would be at or after `stopAtMs`. */
  private pastStop(delayMs: number): boolean {
    return this.options.stopAtMs !== undefined && this.options.now() + delayMs >= this.options.stopAtMs;
  }

  /** Fires at the latest moment the holder may still act: the renew deadline after the last confirmation. */
  private armWatchdog(): void {
    clearTimeout(this.watchdog);
    const { timing, now } = this.options;
    const dueIn = Math.max(0, this.confirmedAtMs + timing.renewDeadlineMs - now());
    this.watchdog = setTimeout(() => {
      if (this.stopped) return;
      if (now() - this.confirmedAtMs >= timing.renewDeadlineMs) {
        this.lose(`no renewal confirmed within ${timing.renewDeadlineMs} ms`);
      } else {
        this.armWatchdog();
      }
    }, dueIn);
  }

  private lose(why: string): void {
    this.abort(new LeaseLostError(`lease lost: ${why}`, this.lease.runId, this.lease.fence));
  }

  private abort(error: LeaseLostError): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.watchdog);
    if (!this.options.controller.signal.aborted) this.options.controller.abort(error);
  }
}

/** The moment a confirmed lease was granted or renewed (its expiry minus the lease duration). */
function startOf(lease: HeldLease, timing: LeaseTiming): number {
  return lease.expiresAtMs - timing.durationMs;
}
