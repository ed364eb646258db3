import type { IRequestManager, Request } from '@crawlee/core';

import { CrawlDelayTooLongError, DomainUnreachableError } from '../core/errors';
import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { DispatchReservation } from '../pacing/domain-state';
import type { DomainStateStore } from '../pacing/domain-state-store';
import { concurrencyLimit, readyAt } from '../pacing/readiness-decision';
import { finishEstimateAt, slackSpacingMs } from '../pacing/crawl-slack';
import type { PacingFloor } from '../pacing/pacing-floor';
import type { QuotaLedger } from './quota-ledger';
import type { DomainQueue } from '../core/domain-queue';
import type { OriginBooks } from '../robots/origin-books';
import type { ScopeRouter } from '../scopes/scope-router';
import type { MaybePromise } from '../core/maybe-promise';
import { andThen } from '../core/maybe-promise';
import type { SharedClockSync } from '../shared-clock/shared-clock-sync';
import type { SharedHold, SharedLimits } from '../shared-clock/shared-limits';
import { emptyHold } from '../shared-clock/shared-limits';
import type { Clock } from '../core/clock';
import type { Handout, HandoutLedger, HeldSlot } from './handout-ledger';
import { CrawlHorizon } from './crawl-horizon';

/** One dispatch in progress: the window and slot it took, until it is committed or rolled back. */
export interface Ticket {
    readonly entry: DomainQueue;
    readonly reservation: DispatchReservation;
    readonly now: number;
    /** Slots and quota taken in the shared clock (empty without shared limits). */
    readonly hold: SharedHold;
}

/** What the dispatcher works with. */
export interface DispatcherDeps {
    options: ResolvedThrottlingOptions;
    router: ScopeRouter;
    states: DomainStateStore;
    floor: PacingFloor;
    shared: SharedClockSync;
    limits: SharedLimits;
    quotas: QuotaLedger;
    handouts: HandoutLedger;
    clock: Clock;
    /** The origin gate's bookkeeping: whether a key's origins are blocked (robots.txt stayed unreachable). */
    origins: Pick<OriginBooks, 'everyBlocked' | 'failureOf'>;
    /** A request of `key` went out (the shared learned rate counts it). */
    departed?(key: string): void;
}

/**
 * Takes a dispatch window as one reservation: our own clocks and slot first (synchronously, so a
 * concurrent fetch cannot take the same window), then a concurrency slot shared with other
 * processes, then the shared clocks, then the request's other scopes and quotas (ours, then the
 * shared ones). Each step that says no rolls back what the earlier ones took; a commit records the
 * handout.
 */
export class Dispatcher {
    private readonly options: ResolvedThrottlingOptions;
    private readonly router: ScopeRouter;
    private readonly states: DomainStateStore;
    private readonly floor: PacingFloor;
    private readonly shared: SharedClockSync;
    private readonly limits: SharedLimits;
    private readonly quotas: QuotaLedger;
    private readonly handouts: HandoutLedger;
    private readonly clock: Clock;
    // The origin blocks the gate recorded, read to fail a blocked origin's requests unsent.
    private readonly origins: Pick<OriginBooks, 'everyBlocked' | 'failureOf'>;
    private readonly departed?: (key: string) => void;
    // When each domain's latest request was sent (the client's last hook), so the next one sent keeps
    // the interval after it; weak, so an evicted domain's entry goes with it.
    private readonly lastSends = new WeakMap<DomainQueue, number>();
    // When the crawl's slowest domain should be done, from each domain's estimate (`estimateFinish`).
    private readonly horizon = new CrawlHorizon();

    constructor(deps: DispatcherDeps) {
        ({
            options: this.options,
            router: this.router,
            states: this.states,
            floor: this.floor,
            shared: this.shared,
            limits: this.limits,
            quotas: this.quotas,
            handouts: this.handouts,
            clock: this.clock,
            origins: this.origins,
            departed: this.departed,
        } = deps);
    }

    /** When a domain's queue may hand out next: its scope's clocks, slots and quota, and any hold. */
    readyAt(entry: DomainQueue, now: number): number {
        const state = this.states.read(entry.key);
        const policy = this.router.policyOf(entry.key);
        // A domain past its error budget, skipped for its crawl delay, or whose robots.txt stayed
        // unreachable, hands its requests out at once, to fail them without waiting.
        if (state && (this.failFast(entry.key) || this.origins.everyBlocked(entry, now))) {
            return state.inFlight < concurrencyLimit(state, policy) ? 0 : Number.POSITIVE_INFINITY;
        }
        return Math.max(state ? readyAt(state, now, policy) : 0, entry.blockedUntil);
    }

    /**
     * Fails a request of a domain past its error budget, or of an origin whose robots.txt stayed
     * unreachable, before it is sent (the crawler's pre-navigation hook); a domain that answered since
     * gets its request back as it was.
     */
    checkReachable(request: Request): void {
        const handout = this.handouts.get(request);
        const key = handout?.domain?.key ?? this.router.domainKeyOf(request.url);
        const failure = key === undefined ? undefined : this.failFast(key);
        if (failure) throw failure(request.url);
        const blocked = handout?.domain && this.origins.failureOf(handout.domain, request.url, this.clock.now());
        if (blocked) throw blocked;
        if (handout?.unreachable) {
            request.noRetry = false;
            handout.unreachable = false;
        }
        if (handout) this.countFromSend(handout);
    }

    /**
     * The request is being written to the socket now (an HTTP client's last hook before it sends):
     * its interval counts again from here, past the crawler's other hooks and the client's own setup
     * (header generation), which on a loaded machine take tens of ms, more for some requests than for
     * others. Counted only from the pre-navigation hook, a request that lagged there reached the site
     * late, and the next one, on time, less than an interval after it. So the send also waits: the
     * answer is how many ms to hold it, until an interval after the key's previous send (the next
     * request may have been handed out before a late one left, and be sent first).
     */
    departs(request: Request): number {
        const handout = this.handouts.get(request);
        if (!handout) return 0;
        const entry = handout.domain;
        const intervalMs = handout.intervalMs;
        if (!entry || intervalMs === undefined || this.countsFromResponse(entry)) return 0;
        const now = this.clock.now();
        const previous = this.lastSends.get(entry);
        const holdMs = previous === undefined ? 0 : Math.max(0, previous + intervalMs - now);
        this.lastSends.set(entry, now + holdMs);
        this.countFromSend(handout, now + holdMs);
        return holdMs;
    }

    /**
     * The request leaves at `at` (the pre-navigation hook, then the client's send), which on a busy
     * event loop can be a good part of an interval after its handout: the next dispatch of its key,
     * here and in every process sharing the clock, counts the interval from then, so the site sees
     * it between arrivals. Counting again later only moves the clock on.
     */
    private countFromSend(handout: Handout, at = this.clock.now()): void {
        const entry = handout.domain;
        const intervalMs = handout.intervalMs;
        if (!entry || intervalMs === undefined || this.countsFromResponse(entry)) return;
        const moved = this.states.update(entry.key, (s) => s.holdDispatchUntil(at + intervalMs));
        // A leased key's next dispatch reaches the other processes with the lease's end.
        if (moved && !this.shared.holdsLease(entry)) this.shared.publish(entry.key);
    }

    /**
     * A key leased until its response (one at a time across processes) counts its interval from the
     * response, and the lease's end carries it to the others. A learned pace is the exception: the
     * response re-arms only the minimums (a pace counted from the response would slow with the site's
     * latency), so its interval counts from the send, and the lease's end carries that.
     */
    private countsFromResponse(entry: DomainQueue): boolean {
        return this.shared.holdsLease(entry) && !this.router.policyOf(entry.key).rampup;
    }

    /**
     * Why a domain's requests fail without being sent, as the error to fail them with: its error
     * budget is spent, or its robots.txt asks for a longer crawl delay than we keep
     * (`onExcessiveCrawlDelay: 'skip'`). Undefined when they go as usual.
     */
    failFast(key: string): ((url: string) => Error) | undefined {
        const state = this.states.read(key);
        if (!state) return undefined;
        if (state.limits.isUnreachable(this.options.maxConsecutiveErrors)) {
            const spent = state.limits.consecutiveErrors;
            return (url) => new DomainUnreachableError(url, key, spent);
        }
        const declared = state.limits.excessiveCrawlDelaySecs;
        if (declared !== undefined) {
            return (url) => new CrawlDelayTooLongError(url, key, declared, this.options.maxCrawlDelaySecs);
        }
        return undefined;
    }

    /**
     * Arms the domain's clocks and takes a slot (at once, before anything can await), then a slot
     * shared with other processes (before the window, so a domain whose shared slots are all taken
     * spends no window), then reserves the shared clock. Undefined (nothing held) when the shared
     * clock says not yet, or failed; the domain is then held until it allows. Answers at once unless
     * the shared clock answers later.
     */
    open(entry: DomainQueue, now: number, probe = false): MaybePromise<Ticket | undefined> {
        const policy = this.router.policyOf(entry.key);
        const slackMs = probe || !policy.rampup ? 0 : this.slackMs(entry, now);
        const reservation = this.states.update(entry.key, (s) =>
            s.dispatch(now, this.floor.ms, policy, this.options.random, probe, entry.queued, slackMs),
        );
        if (!probe) this.estimateFinish(entry, now);
        const ticket: Ticket = { entry, reservation, now, hold: emptyHold() };
        const slot = this.limits.slotWant(entry.key);
        const slotTaken = slot ? this.limits.take(entry, [slot], now, ticket.hold) : true;
        const granted = andThen(slotTaken, (ok) => ok && this.shared.reserve(entry, reservation, now));
        return andThen(granted, (ok): Ticket | undefined => {
            if (ok) return ticket;
            this.rollback(ticket);
            return undefined;
        });
    }

    /** The least spacing after a ramping domain's dispatch at `now` that the crawl's horizon allows (pacing/crawl-slack.ts). */
    private slackMs(entry: DomainQueue, now: number): number {
        const guessing = this.states.read(entry.key)?.rampupState?.paceIsGuess === true;
        return slackSpacingMs(this.horizon.at(now), now, entry.queued, guessing);
    }

    /**
     * When the domain should be done, noted for the horizon (pacing/crawl-slack.ts): at each dispatch,
     * and when a refusal or an announced quota moved its clocks (a domain held by them sends nothing
     * that would renew its estimate, and the horizon would come in too soon).
     */
    estimateFinish(entry: DomainQueue, now: number): void {
        const state = this.states.read(entry.key);
        if (!state) return;
        const policy = this.router.policyOf(entry.key);
        this.horizon.note(entry.key, finishEstimateAt(state, policy, entry.queued, now, this.floor.ms), now);
    }

    /**
     * Clears the request's other scopes and quotas, here and then in the shared clock; false (and
     * rolled back) when one says not yet.
     */
    admit(ticket: Ticket, request: Request): MaybePromise<HeldSlot[] | undefined | false> {
        const admitted = this.quotas.admit(request, ticket.entry, ticket.now);
        if (admitted === false) {
            this.rollback(ticket);
            return false;
        }
        const costs = this.quotas.costsSpent(request);
        const wants = costs ? this.limits.wantsOf(ticket.entry.key, costs) : [];
        if (wants.length === 0) return admitted;
        return andThen(this.limits.take(ticket.entry, wants, ticket.now, ticket.hold), (ok) => {
            if (ok) {
                this.quotas.noteShared(request, ticket.hold.spends);
                return admitted;
            }
            this.quotas.undo(request);
            this.rollback(ticket);
            return false;
        });
    }

    /** Nothing went out: gives the window, the slots, the quota and any shared lease back. */
    rollback(ticket: Ticket): void {
        this.states.update(ticket.entry.key, (s) => s.cancelDispatch(ticket.reservation));
        this.limits.refund(ticket.hold);
        this.shared.settle(ticket.entry, this.clock.now());
    }

    /**
     * A probe (robots.txt) that went out got its answer, or none: frees its slot and, for a
     * one-at-a-time scope, counts the interval from now, as for a request's response.
     */
    finishProbe(ticket: Ticket): void {
        const now = this.clock.now();
        const policy = this.router.policyOf(ticket.entry.key);
        this.states.update(ticket.entry.key, (s) => {
            s.release(ticket.reservation.slot);
            s.armAfterResponse(now, this.floor.ms, policy);
        });
        this.limits.release(ticket.hold);
        this.shared.settle(ticket.entry, now);
    }

    /** The request goes out: remembers where it came from and what it holds. */
    commit(ticket: Ticket, request: Request, source: IRequestManager, extras: HeldSlot[] | undefined): Request {
        // Past the error budget: no retry, so the next network error (or the navigation hook) fails it.
        const unreachable = this.failFast(ticket.entry.key) !== undefined && !request.noRetry;
        if (unreachable) request.noRetry = true;
        this.countFromDeparture(ticket);
        this.handouts.record(request, {
            source,
            domain: ticket.entry,
            slot: ticket.reservation.slot,
            errors: request.errorMessages?.length ?? 0,
            extras,
            unreachable,
            ...(ticket.hold.slots.length > 0 ? { shared: ticket.hold } : {}),
            sentAt: this.clock.now(),
            ...intervalOf(ticket),
        });
        this.departed?.(ticket.entry.key);
        return request;
    }

    /**
     * The window was armed before the head request was fetched; when storage took a while, the
     * request leaves that much later, and the next one must not: the next window counts from now.
     * (The per-slot clock is left as armed: DomainState keeps it private.)
     */
    private countFromDeparture(ticket: Ticket): void {
        const lateMs = this.clock.now() - ticket.now;
        if (!(lateMs > 0)) return;
        const nextAt = ticket.reservation.armedNextDispatchAt + lateMs;
        const moved = this.states.update(ticket.entry.key, (s) => s.holdDispatchUntil(nextAt));
        if (moved) this.shared.publish(ticket.entry.key);
    }
}

/** The interval a dispatch armed (jitter included), when it has one. */
function intervalOf(ticket: Ticket): { intervalMs?: number } {
    const { armedNextDispatchAt } = ticket.reservation;
    const intervalMs = armedNextDispatchAt - ticket.now;
    return intervalMs > 0 ? { intervalMs } : {};
}
