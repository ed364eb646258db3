import type { MaybePromise } from './maybe-promise';
import type {
    QuotaSpend,
    RefusalPolicy,
    SharedRate,
    SharedRefusal,
    SharedTally,
    SlotLease,
    TallyCounts,
} from './shared-limit-types';

export type { MaybePromise } from './maybe-promise';

/**
 * Pacing clocks that several crawler processes share, so that together they keep each domain's
 * interval and backoff instead of each process keeping them on its own (N processes, N× the rate).
 *
 * Three methods are required: the two clocks (when the domain may next be dispatched to, and until
 * when it is backed off). The others are optional; a clock that has them shares more, and the manager
 * uses each one it finds: concurrency leases (`acquireSlot`, `renewSlot`, `releaseSlot`), quotas
 * (`spendQuota`, `adjustQuota`), the backoff's escalation (`recordRefusal`) and a learned rate
 * (`shareRate`, `readRate`). Without them those stay per process. A clock may answer at once (a
 * file) or with a promise (a network store): the manager takes its own window synchronously first,
 * so nothing in this process can take it meanwhile.
 *
 * The optional methods take the caller's `now` last (the manager always passes its own) and answer
 * times in that time base; without it a clock reads its own (the `clock` option of `FileDomainClock`
 * and `RedisDomainClock`).
 */
export interface SharedDomainClock {
    /**
     * Atomically: if the shared clocks of `key` allow a dispatch at `now`, arms the next one for
     * `nextAt` (never earlier than an existing reservation) and grants it; otherwise says when the
     * shared clocks allow one. A clock that has {@link tally} may answer the key's totals with it, at
     * no extra call: adaptive pacing then sees the other hosts' counts at every attempt, not only
     * when this host tallies.
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
    /**
     * Records a refusal of `key` for every host: the backoff escalates once per burst (not while a
     * shared backoff runs, whichever host started it), and a server wait only lengthens a running one.
     */
    recordRefusal?(key: string, policy: RefusalPolicy, now?: number): MaybePromise<SharedRefusal>;
    /**
     * Takes one of `limit` concurrency slots of `key` shared by every host, as a lease of `leaseMs`
     * that runs out unless renewed (a dead host's slot frees itself). Needs {@link releaseSlot}.
     */
    acquireSlot?(key: string, limit: number, leaseMs: number, now?: number): MaybePromise<SlotLease>;
    /** Extends a slot lease to `leaseMs` from now; false when it had run out or was released. */
    renewSlot?(key: string, token: string, leaseMs: number, now?: number): MaybePromise<boolean>;
    /** Gives a slot back; false when it was no longer held. */
    releaseSlot?(key: string, token: string): MaybePromise<boolean>;
    /**
     * Spends `cost` of the quota of `key` (`limit` per `windowMs`, fixed windows), all-or-nothing,
     * shared by every host; an empty window takes any cost.
     */
    spendQuota?(key: string, cost: number, limit: number, windowMs: number, now?: number): MaybePromise<QuotaSpend>;
    /**
     * Corrects a spend made at `spentAt` by `delta` (the real cost minus the estimate), if its
     * window is still the one kept; the spend never drops below 0. Answers that window's spend after
     * it, or 0 when a later window replaced it.
     */
    adjustQuota?(key: string, delta: number, windowMs: number, spentAt: number, now?: number): MaybePromise<number>;
    /**
     * Offers the rate (requests per second, all hosts together) a host learned for `key` at `at`, and
     * answers the rate in force: the one learned latest (at a tie, the lower).
     */
    shareRate?(key: string, rate: number, at: number, now?: number): MaybePromise<SharedRate>;
    /** The rate in force for `key`, or undefined when no host shared one (or it expired). */
    readRate?(key: string, now?: number): MaybePromise<SharedRate | undefined>;
    /**
     * Adds this host's dispatches and accepted answers of `key` (since its last call) to every
     * host's, and answers the totals with the rate in force. Adaptive pacing measures the site from
     * the totals, not from its own share of them (docs/processes.md, "A shared learned rate"); without
     * it (or `shareRate`) each host learns its own rate.
     */
    tally?(key: string, add: TallyCounts, now?: number): MaybePromise<SharedTally>;
    /** Lets go of connections (a Redis client); the manager never calls it. */
    close?(): Promise<void>;
}

/**
 * The answer of {@link SharedDomainClock.reserve}; `tally`: the key's totals as {@link SharedDomainClock.tally}
 * would answer them with nothing added (optional).
 */
export type SharedReservation = ({ granted: true } | { granted: false; notBefore: number }) & { tally?: SharedTally };

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
