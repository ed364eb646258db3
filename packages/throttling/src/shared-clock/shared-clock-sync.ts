import type { DispatchReservation } from '../pacing/domain-state';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { DomainQueue } from '../queues/domain-queue';
import type { ScopeRouter } from '../routing/scope-router';
import type { SharedDomainClock } from './shared-domain-clock';

/**
 * Longest time a one-at-a-time domain's request holds the shared clock before its response: other
 * processes wait at most this long for a process that died with a request in flight.
 */
export const SHARED_LEASE_MS = 30_000;

/** How often a domain held by another process's clock asks the shared clock again. */
export const SHARED_RECHECK_MS = 100;

/**
 * Keeps this process's clocks and the clocks shared with other processes in step: a dispatch
 * reserves its window there, a response ends a lease, a backoff is published. Without a shared
 * clock every call is a no-op.
 */
export class SharedClockSync {
    constructor(
        private readonly shared: SharedDomainClock | undefined,
        private readonly states: DomainStateStore,
        private readonly router: ScopeRouter,
        private readonly entryOf: (key: string) => DomainQueue | undefined,
        private readonly warnOnce: (message: string) => void,
    ) {}

    /**
     * Reserves a dispatch our own clocks allowed in the shared clocks. When they say not yet, the
     * domain is held until then and false is returned. A one-at-a-time domain leases the shared clock
     * until its response (at most {@link SHARED_LEASE_MS}), so that, as inside one process, the next
     * request of any process leaves an interval after the response. Throws what the clock throws.
     */
    reserve(entry: DomainQueue, reservation: DispatchReservation, now: number): boolean {
        const shared = this.shared;
        if (!shared) return true;
        const oneAtATime = this.states.read(entry.key)?.concurrencyLimit(this.router.policyOf(entry.key)) === 1;
        const nextAt = oneAtATime
            ? Math.max(reservation.armedNextDispatchAt, now + SHARED_LEASE_MS)
            : reservation.armedNextDispatchAt;
        const answer = shared.reserve(entry.key, now, nextAt);
        if (answer.granted) {
            if (oneAtATime) entry.sharedLease = nextAt;
            return true;
        }
        // The shared clock may be a lease that ends early (at the holder's response): look again soon.
        entry.blockedUntil = Math.max(entry.blockedUntil, Math.min(answer.notBefore, now + SHARED_RECHECK_MS));
        return false;
    }

    /** Ends this process's lease of the domain's shared clock, if it holds one (next dispatch ≥ `earliest`). */
    settle(entry: DomainQueue, earliest: number): void {
        const lease = entry.sharedLease;
        if (!this.shared || lease === undefined) return;
        entry.sharedLease = undefined;
        const nextAt = Math.max(this.states.read(entry.key)?.nextDispatchAt ?? 0, earliest);
        try {
            this.shared.settle(entry.key, lease, nextAt);
        } catch (error) {
            this.warnOnce(
                `Could not update the shared clocks of ${entry.key}; other processes wait for the lease to run out: ${String(error)}`,
            );
        }
    }

    /** Tells the shared clocks what our clocks of `key` now say; a failure only costs the sharing. */
    publish(key: string): void {
        const state = this.shared && this.states.read(key);
        if (!this.shared || !state) return;
        const entry = this.entryOf(key);
        try {
            // While we hold the lease, its end carries our next dispatch time (settle).
            this.shared.extend(key, {
                nextAt: entry?.sharedLease === undefined ? state.nextDispatchAt : undefined,
                backoffUntil: state.backoffUntil,
            });
        } catch (error) {
            this.warnOnce(
                `Could not update the shared clocks of ${key}; pacing across processes may slip: ${String(error)}`,
            );
        }
    }
}
