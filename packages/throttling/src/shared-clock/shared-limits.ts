import type { DomainStateStore } from '../pacing/domain-state-store';
import { concurrencyLimit } from '../pacing/readiness-decision';
import type { DomainQueue } from '../core/domain-queue';
import type { ScopeRouter } from '../scopes/scope-router';
import type { MaybePromise, Outcome } from '../core/maybe-promise';
import { allOf, andThen, outcomeOf } from '../core/maybe-promise';
import type { SharedClockFailures } from './shared-clock-failures';
import type { SharedDomainClock } from '../core/shared-domain-clock';
import type { QuotaSpend, SlotLease } from '../core/shared-limit-types';

/** A concurrency slot held in the shared clock for one request in flight. */
export interface SharedSlot {
    key: string;
    token: string;
    /** When the lease runs out unless renewed, in the manager's time. */
    expiresAt: number;
    /** The pending renewal. */
    renewal?: unknown;
    /** Its request is done: no more renewals. */
    released?: boolean;
}

/** Cost spent in a shared quota for one request, so it can be corrected or given back. */
export interface SharedSpend {
    key: string;
    cost: number;
    windowMs: number;
    /** When it was spent, in the manager's time. */
    at: number;
}

/** What one dispatch holds in the shared clock: given back on rollback, slots freed on completion. */
export interface SharedHold {
    slots: SharedSlot[];
    spends: SharedSpend[];
}

/** What a dispatch asks of one scope: a slot of `limit`, and/or `cost` of its quota. */
export interface SharedWant {
    key: string;
    limit?: number;
    quota?: { cost: number; limit: number; windowMs: number };
}

/** What {@link SharedLimits} works with. */
export interface SharedLimitsOptions {
    shared: SharedDomainClock | undefined;
    states: DomainStateStore;
    router: ScopeRouter;
    failures: SharedClockFailures;
    /** Length of a slot's lease; renewed every third of it while its request is in flight. */
    leaseMs: number;
    /** How soon a domain whose shared slots are all taken asks again (a release frees one any time). */
    recheckMs: number;
}

type Answer = { want: SharedWant } & (
    { kind: 'slot'; outcome: Outcome<SlotLease> } | { kind: 'quota'; outcome: Outcome<QuotaSpend> }
);

/** A new, empty hold. */
export function emptyHold(): SharedHold {
    return { slots: [], spends: [] };
}

/**
 * Concurrency slots and quotas shared by every process through the shared clock, when it offers
 * them (`acquireSlot`/`releaseSlot`, `spendQuota`): a scope's `concurrency: 2` is 2 across all
 * processes, and a quota is spent once for all. A dispatch takes what it needs all-or-nothing; a
 * slot is a lease, renewed while its request is in flight, so a dead process's slot frees itself.
 */
export class SharedLimits {
    constructor(private readonly options: SharedLimitsOptions) {}

    /** The slot a dispatch of `key` needs in the shared clock, if slots are shared and the scope has a limit. */
    slotWant(key: string): SharedWant | undefined {
        const { shared, states, router } = this.options;
        if (!shared?.acquireSlot || !shared.releaseSlot) return undefined;
        const state = states.read(key);
        const limit = state && concurrencyLimit(state, router.policyOf(key));
        return limit !== undefined && Number.isFinite(limit) ? { key, limit } : undefined;
    }

    /**
     * What a request spending `costs` per scope needs beyond its queue's slot (taken at open):
     * the other scopes' slots and every quota, in the shared clock.
     */
    wantsOf(primaryKey: string, costs: readonly (readonly [string, number])[]): SharedWant[] {
        const shared = this.options.shared;
        const wants: SharedWant[] = [];
        for (const [key, cost] of costs) {
            const quota = this.options.router.policyOf(key).quota;
            const want: SharedWant = { key, ...(key === primaryKey ? {} : this.slotWant(key)) };
            if (quota && shared?.spendQuota) want.quota = { cost, ...quota };
            if (want.limit !== undefined || want.quota) wants.push(want);
        }
        return wants;
    }

    /**
     * Takes every slot and quota of `wants` into `hold`, all-or-nothing (the calls go out together).
     * False when one says not yet (the domain is held until it may) or the clock failed under
     * `'pause'`; under `'local'` a failed call is left to this process's own limits.
     */
    take(entry: DomainQueue, wants: readonly SharedWant[], now: number, hold: SharedHold): MaybePromise<boolean> {
        const shared = this.options.shared;
        if (!shared || wants.length === 0) return true;
        const calls: MaybePromise<Answer>[] = [];
        for (const want of wants) {
            if (want.limit !== undefined) {
                const outcome = outcomeOf(() => shared.acquireSlot!(want.key, want.limit!, this.options.leaseMs, now));
                calls.push(andThen(outcome, (o): Answer => ({ want, kind: 'slot', outcome: o })));
            }
            const quota = want.quota;
            if (quota) {
                const outcome = outcomeOf(() =>
                    shared.spendQuota!(want.key, quota.cost, quota.limit, quota.windowMs, now),
                );
                calls.push(andThen(outcome, (o): Answer => ({ want, kind: 'quota', outcome: o })));
            }
        }
        return andThen(allOf(calls), (answers) => this.decide(entry, answers, now, hold));
    }

    /** Frees the slots of a hold (its request is done); the quota stays spent. */
    release(hold: SharedHold | undefined): void {
        const shared = this.options.shared;
        if (!shared?.releaseSlot || !hold) return;
        for (const slot of hold.slots.splice(0)) {
            slot.released = true;
            if (slot.renewal !== undefined) this.options.failures.timers.clear(slot.renewal);
            slot.renewal = undefined;
            // Other processes wait for this slot: a release that failed is sent again while the lease lasts.
            this.options.failures.persist(
                `Could not free a shared slot of ${slot.key}; trying again until its lease runs out`,
                () => shared.releaseSlot!(slot.key, slot.token),
                slot.expiresAt,
            );
        }
    }

    /** Gives everything of a hold back: nothing went out. */
    refund(hold: SharedHold): void {
        this.release(hold);
        for (const spend of hold.spends.splice(0)) this.adjust(spend, -spend.cost);
    }

    /** Corrects a shared quota spend by `delta` (a reported cost); a failure only costs accuracy. */
    adjust(spend: SharedSpend, delta: number): void {
        const shared = this.options.shared;
        if (!shared?.adjustQuota || delta === 0) return;
        spend.cost += delta;
        this.options.failures.quietly(`Could not correct the shared quota of ${spend.key}`, () =>
            shared.adjustQuota!(spend.key, delta, spend.windowMs, spend.at, this.options.failures.now()),
        );
    }

    private decide(entry: DomainQueue, answers: Answer[], now: number, hold: SharedHold): boolean {
        const taken = emptyHold();
        let blockedUntil = 0;
        let failure: { what: string; error: unknown } | undefined;
        for (const answer of answers) {
            const { want } = answer;
            if (answer.kind === 'slot') {
                if (!answer.outcome.ok) failure ??= { what: 'acquireSlot', error: answer.outcome.error };
                else if (answer.outcome.value.granted) {
                    const { token, expiresAt } = answer.outcome.value;
                    taken.slots.push({ key: want.key, token, expiresAt });
                } else {
                    const notBefore = Math.min(answer.outcome.value.notBefore, now + this.options.recheckMs);
                    blockedUntil = Math.max(blockedUntil, notBefore);
                }
            } else if (!answer.outcome.ok) failure ??= { what: 'spendQuota', error: answer.outcome.error };
            else if (answer.outcome.value.granted) {
                const { cost, windowMs } = want.quota!;
                taken.spends.push({ key: want.key, cost, windowMs, at: now });
            } else blockedUntil = Math.max(blockedUntil, answer.outcome.value.notBefore);
        }
        const goesOn =
            blockedUntil === 0 && (!failure || this.options.failures.gate(entry, now, failure.what, failure.error));
        if (!goesOn) {
            entry.holdUntil(blockedUntil);
            this.refund(taken);
            return false;
        }
        for (const slot of taken.slots) this.scheduleRenewal(slot);
        hold.slots.push(...taken.slots);
        hold.spends.push(...taken.spends);
        return true;
    }

    /** Renews a slot's lease every third of it while its request is in flight; stops once it is released. */
    private scheduleRenewal(slot: SharedSlot): void {
        const { shared, failures, leaseMs } = this.options;
        if (!shared?.renewSlot || slot.released) return;
        slot.renewal = failures.timers.set(() => {
            slot.renewal = undefined;
            const renewed = outcomeOf(() => shared.renewSlot!(slot.key, slot.token, leaseMs, failures.now()));
            void andThen(renewed, (answer) => {
                if (slot.released) return;
                if (answer.ok && !answer.value) {
                    failures.warnOnce(
                        `A shared slot of ${slot.key} ran out while its request was in flight (the clock was out of reach for longer than its lease); other processes may briefly send one more.`,
                    );
                    return;
                }
                if (answer.ok) slot.expiresAt = failures.now() + leaseMs;
                else failures.warnOnce(`Could not renew a shared slot of ${slot.key}: ${String(answer.error)}`);
                // A lease past its end can only be answered "ran out": renewals stop there.
                if (failures.now() < slot.expiresAt) this.scheduleRenewal(slot);
            });
        }, leaseMs / 3);
    }
}
