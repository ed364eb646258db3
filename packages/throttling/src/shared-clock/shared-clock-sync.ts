import type { DispatchReservation } from '../pacing/domain-state';
import type { DomainStateStore } from '../pacing/domain-state-store';
import { concurrencyLimit } from '../pacing/readiness-decision';
import type { DomainQueue } from '../core/domain-queue';
import type { ScopeRouter } from '../scopes/scope-router';
import type { MaybePromise } from '../core/maybe-promise';
import { andThen, outcomeOf } from '../core/maybe-promise';
import type { SharedClockFailures } from './shared-clock-failures';
import type { SharedDomainClock, SharedReservation } from '../core/shared-domain-clock';
import type { SharedRateSync } from './shared-rate-sync';

export { SHARED_ERROR_RETRY_MS } from './shared-clock-failures';
export type { SharedClockErrorMode } from './shared-clock-failures';

/**
 * Longest time a one-at-a-time domain's request holds the shared clock before its response: other
 * processes wait at most this long for a process that died with a request in flight. Also the
 * length of a shared concurrency slot's lease, renewed while its request is in flight.
 */
export const SHARED_LEASE_MS = 30_000;

/** How often a domain held by another process's clock (or its slots) asks the shared clock again. */
export const SHARED_RECHECK_MS = 100;

/** What {@link SharedClockSync} works with. */
export interface SharedClockSyncOptions {
    /** The shared clock; undefined: every call does nothing. */
    shared: SharedDomainClock | undefined;
    states: DomainStateStore;
    router: ScopeRouter;
    entryOf(key: string): DomainQueue | undefined;
    failures: SharedClockFailures;
    /** Reads the key's totals a reservation answers (the learned rate shared across processes). */
    rates?: Pick<SharedRateSync, 'mark' | 'observe'>;
}

/**
 * Keeps this process's clocks and the clocks shared with other processes in step: a dispatch
 * reserves its window there, a response ends a lease, a backoff is published. Without a shared
 * clock every call is a no-op. The clock may answer at once (a file) or later (Redis).
 */
export class SharedClockSync {
    // The shared clock's `nextAt` this process leased for each one-at-a-time domain's request in
    // flight (so at most one per domain), until the response says when the next may go.
    private readonly leases = new Map<DomainQueue, number>();

    constructor(private readonly options: SharedClockSyncOptions) {}

    /** Whether this process leases the domain's shared clock until its request's response. */
    holdsLease(entry: DomainQueue): boolean {
        return this.leases.has(entry);
    }

    /**
     * Reserves a dispatch our own clocks allowed in the shared clocks. When they say not yet, the
     * domain is held until then and false is answered. A one-at-a-time domain leases the shared clock
     * until its response (at most {@link SHARED_LEASE_MS}), so that, as inside one process, the next
     * request of any process leaves an interval after the response. When the clock fails, the domain
     * is held and asked again (`'pause'`), or paced by this process alone (`'local'`); never thrown.
     */
    reserve(entry: DomainQueue, reservation: DispatchReservation, now: number): MaybePromise<boolean> {
        const { shared, states, router, failures, rates } = this.options;
        if (!shared) return true;
        const state = states.read(entry.key);
        const oneAtATime = state !== undefined && concurrencyLimit(state, router.policyOf(entry.key)) === 1;
        const nextAt = oneAtATime
            ? Math.max(reservation.armedNextDispatchAt, now + SHARED_LEASE_MS)
            : reservation.armedNextDispatchAt;
        const mark = rates?.mark(entry.key);
        return andThen(
            outcomeOf(() => shared.reserve(entry.key, now, nextAt)),
            (answer) => {
                if (!answer.ok) return failures.gate(entry, now, 'reserve', answer.error);
                rates?.observe(entry.key, mark, answer.value.tally);
                return this.apply(entry, answer.value, oneAtATime ? nextAt : undefined, now);
            },
        );
    }

    /** Ends this process's lease of the domain's shared clock, if it holds one (next dispatch ≥ `earliest`). */
    settle(entry: DomainQueue, earliest: number): void {
        const { shared, states, failures } = this.options;
        const lease = this.leases.get(entry);
        if (!shared || lease === undefined) return;
        this.leases.delete(entry);
        const nextAt = Math.max(states.read(entry.key)?.nextDispatchAt ?? 0, earliest);
        // Every process waits for this lease until it is ended: a store that failed once (a short
        // outage) is asked again rather than leaving the others to wait out the whole lease.
        failures.persist(
            `Could not update the shared clocks of ${entry.key}; trying again until the lease runs out`,
            () => shared.settle(entry.key, lease, nextAt),
            lease,
        );
    }

    /** Tells the shared clocks what our clocks of `key` now say; a failure only costs the sharing. */
    publish(key: string): void {
        const { shared, states, entryOf, failures } = this.options;
        const state = shared && states.read(key);
        if (!shared || !state) return;
        const entry = entryOf(key);
        // While we hold the lease, its end carries our next dispatch time (settle).
        const clocks = {
            nextAt: entry === undefined || !this.leases.has(entry) ? state.nextDispatchAt : undefined,
            backoffUntil: state.backoffUntil,
        };
        failures.quietly(`Could not update the shared clocks of ${key}; pacing across processes may slip`, () =>
            shared.extend(key, clocks),
        );
    }

    private apply(entry: DomainQueue, answer: SharedReservation, lease: number | undefined, now: number): boolean {
        if (answer.granted) {
            if (lease !== undefined) this.leases.set(entry, lease);
            return true;
        }
        // The shared clock may be a lease that ends early (at the holder's response): look again soon.
        entry.holdUntil(Math.min(answer.notBefore, now + SHARED_RECHECK_MS));
        return false;
    }
}
