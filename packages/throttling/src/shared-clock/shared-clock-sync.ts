import type { DispatchReservation } from '../pacing/domain-state';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { DomainQueue } from '../queues/domain-queue';
import type { ScopeRouter } from '../routing/scope-router';
import type { MaybePromise } from './maybe-promise';
import { isPromise } from './maybe-promise';
import type { SharedDomainClock, SharedReservation } from './shared-domain-clock';

/**
 * Longest time a one-at-a-time domain's request holds the shared clock before its response: other
 * processes wait at most this long for a process that died with a request in flight.
 */
export const SHARED_LEASE_MS = 30_000;

/** How often a domain held by another process's clock asks the shared clock again. */
export const SHARED_RECHECK_MS = 100;

/** How long a domain waits before asking a shared clock that failed again (`onSharedClockError: 'pause'`). */
export const SHARED_ERROR_RETRY_MS = 1_000;

/** What to do when the shared clock fails: hold the domain and ask again, or pace it locally. */
export type SharedClockErrorMode = 'pause' | 'local';

/**
 * Keeps this process's clocks and the clocks shared with other processes in step: a dispatch
 * reserves its window there, a response ends a lease, a backoff is published. Without a shared
 * clock every call is a no-op. The clock may answer at once (a file) or later (Redis).
 */
export class SharedClockSync {
    constructor(
        private readonly shared: SharedDomainClock | undefined,
        private readonly states: DomainStateStore,
        private readonly router: ScopeRouter,
        private readonly entryOf: (key: string) => DomainQueue | undefined,
        private readonly warnOnce: (message: string) => void,
        private readonly onError: SharedClockErrorMode = 'pause',
        private readonly warn: (message: string) => void = warnOnce,
        private readonly now: () => number = Date.now,
        private readonly settleRetryMs = SHARED_ERROR_RETRY_MS,
    ) {}

    /**
     * Reserves a dispatch our own clocks allowed in the shared clocks. When they say not yet, the
     * domain is held until then and false is answered. A one-at-a-time domain leases the shared clock
     * until its response (at most {@link SHARED_LEASE_MS}), so that, as inside one process, the next
     * request of any process leaves an interval after the response. When the clock fails, the domain
     * is held and asked again (`'pause'`), or paced by this process alone (`'local'`); never thrown.
     */
    reserve(entry: DomainQueue, reservation: DispatchReservation, now: number): MaybePromise<boolean> {
        const shared = this.shared;
        if (!shared) return true;
        const oneAtATime = this.states.read(entry.key)?.concurrencyLimit(this.router.policyOf(entry.key)) === 1;
        const nextAt = oneAtATime
            ? Math.max(reservation.armedNextDispatchAt, now + SHARED_LEASE_MS)
            : reservation.armedNextDispatchAt;
        let answer: MaybePromise<SharedReservation>;
        try {
            answer = shared.reserve(entry.key, now, nextAt);
        } catch (error) {
            return this.failed(entry, now, error);
        }
        const apply = (a: SharedReservation) => this.apply(entry, a, oneAtATime ? nextAt : undefined, now);
        if (isPromise(answer)) return answer.then(apply, (error: unknown) => this.failed(entry, now, error));
        return apply(answer);
    }

    /** Ends this process's lease of the domain's shared clock, if it holds one (next dispatch ≥ `earliest`). */
    settle(entry: DomainQueue, earliest: number): void {
        const lease = entry.sharedLease;
        if (!this.shared || lease === undefined) return;
        entry.sharedLease = undefined;
        const nextAt = Math.max(this.states.read(entry.key)?.nextDispatchAt ?? 0, earliest);
        const what = `Could not update the shared clocks of ${entry.key}; trying again until the lease runs out`;
        // Every process waits for this lease until it is ended: a store that failed once (a short
        // outage) is asked again rather than leaving the others to wait out the whole lease.
        const attempt = () =>
            this.quietly(
                what,
                () => this.shared!.settle(entry.key, lease, nextAt),
                () => {
                    if (this.now() + this.settleRetryMs < lease) setTimeout(attempt, this.settleRetryMs).unref();
                },
            );
        attempt();
    }

    /** Tells the shared clocks what our clocks of `key` now say; a failure only costs the sharing. */
    publish(key: string): void {
        const state = this.shared && this.states.read(key);
        if (!this.shared || !state) return;
        const entry = this.entryOf(key);
        const what = `Could not update the shared clocks of ${key}; pacing across processes may slip`;
        // While we hold the lease, its end carries our next dispatch time (settle).
        const clocks = {
            nextAt: entry?.sharedLease === undefined ? state.nextDispatchAt : undefined,
            backoffUntil: state.backoffUntil,
        };
        this.quietly(what, () => this.shared!.extend(key, clocks));
    }

    private apply(entry: DomainQueue, answer: SharedReservation, lease: number | undefined, now: number): boolean {
        if (answer.granted) {
            if (lease !== undefined) entry.sharedLease = lease;
            return true;
        }
        // The shared clock may be a lease that ends early (at the holder's response): look again soon.
        entry.blockedUntil = Math.max(entry.blockedUntil, Math.min(answer.notBefore, now + SHARED_RECHECK_MS));
        return false;
    }

    private failed(entry: DomainQueue, now: number, error: unknown): boolean {
        if (this.onError === 'local') {
            this.warnOnce(
                `The shared clock failed (${String(error)}); pacing by this process alone until it answers again.`,
            );
            return true;
        }
        this.warn(
            `The shared clock failed for ${entry.key} (${String(error)}); holding it and asking again in ${SHARED_ERROR_RETRY_MS} ms (onSharedClockError: 'pause').`,
        );
        entry.blockedUntil = Math.max(entry.blockedUntil, now + SHARED_ERROR_RETRY_MS);
        return false;
    }

    /** Runs an update whose failure only costs the sharing: logged once, never thrown. */
    private quietly(what: string, update: () => MaybePromise<void>, failed?: () => void): void {
        const onError = (error: unknown) => {
            this.warnOnce(`${what}: ${String(error)}`);
            failed?.();
        };
        try {
            const done = update();
            if (isPromise(done)) done.catch(onError);
        } catch (error) {
            onError(error);
        }
    }
}
