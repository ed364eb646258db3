/** A value now or later: a shared clock in another process (Redis) answers over the network. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Pacing clocks that several crawler processes share, so that together they keep each domain's
 * interval and backoff instead of each process keeping them on its own (N processes, N× the rate).
 *
 * Only the two clocks are shared: when the domain may next be dispatched to (crawl delay, configured
 * delay, announced pace) and until when it is backed off. Concurrency slots, quotas and rampup stay
 * per process. A store on this machine (files) answers at once; a store across machines (Redis)
 * answers with a promise, and the manager holds the domain until it has.
 */
export interface SharedDomainClock {
    /**
     * Atomically: if the shared clocks of `key` allow a dispatch at `now`, arms the next one for
     * `nextAt` (never earlier than an existing reservation) and grants it; otherwise says when the
     * shared clocks allow one.
     */
    reserve(key: string, now: number, nextAt: number): MaybePromise<SharedReservation>;
    /** Pushes the shared clocks of `key` to at least these times (a later call never moves them back). */
    extend(key: string, clocks: { nextAt?: number; backoffUntil?: number }): MaybePromise<void>;
    /**
     * Ends a lease: a process that reserved `leasedUntil` for a request in flight says when the
     * next dispatch may really go. If the shared `nextAt` is still the lease, it becomes `nextAt`
     * (earlier or later); if something moved it since, it only moves forward.
     */
    settle(key: string, leasedUntil: number, nextAt: number): MaybePromise<void>;
    /** Lets go of connections or handles, when the store holds any; the clock is not used afterwards. */
    close?(): Promise<void>;
}

/** The answer of {@link SharedDomainClock.reserve}. */
export type SharedReservation = { granted: true } | { granted: false; notBefore: number };

/** The clocks one domain key has in a shared store, in epoch milliseconds. */
export interface SharedClocks {
    nextAt: number;
    backoffUntil: number;
}

/** The pure decision behind `reserve`, kept apart so every implementation decides alike. */
export function decideReservation(
    clocks: SharedClocks,
    now: number,
    nextAt: number,
): { reservation: SharedReservation; clocks: SharedClocks } {
    const notBefore = Math.max(clocks.nextAt, clocks.backoffUntil);
    if (notBefore > now) return { reservation: { granted: false, notBefore }, clocks };
    return {
        reservation: { granted: true },
        clocks: { nextAt: Math.max(clocks.nextAt, nextAt), backoffUntil: clocks.backoffUntil },
    };
}

/** The pure decision behind `settle`. */
export function decideSettlement(clocks: SharedClocks, leasedUntil: number, nextAt: number): SharedClocks {
    return {
        nextAt: clocks.nextAt === leasedUntil ? nextAt : Math.max(clocks.nextAt, nextAt),
        backoffUntil: clocks.backoffUntil,
    };
}
