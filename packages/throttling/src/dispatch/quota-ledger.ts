import type { Request } from '@crawlee/core';

import type { HeldSlot } from './handout-ledger';
import type { IpScopes } from '../ip/ip-scopes';
import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { DomainQueue } from '../core/domain-queue';
import { normalizeScope } from '../options/request-scopes';
import type { ScopeRouter } from '../scopes/scope-router';
import type { SharedLimits, SharedSpend } from '../shared-clock/shared-limits';
import type { DispatchReservation } from '../pacing/domain-state';
import type { DomainStateStore } from '../pacing/domain-state-store';
import { nextQuotaWindow } from '../pacing/domain-limits';
import { readyAt } from '../pacing/readiness-decision';
import type { PacingFloor } from '../pacing/pacing-floor';

/** What a dispatched request spent in each quota, so a reported real cost can correct it. */
interface Spend {
    at: number;
    costs: [scope: string, cost: number][];
    /** The windows and slots taken in its other scopes, to give back if the shared clock says no. */
    reservations: [scope: string, reservation: DispatchReservation][];
    /** What it spent in shared quotas, corrected with the local spend. */
    shared?: SharedSpend[];
}

/** A held-back head request's other scopes are busy: look again this soon for a freed slot. */
const BUSY_SCOPE_RECHECK_MS = 50;

/**
 * Admits a fetched request past the scopes beyond its queue's (per-request scopes) and every quota,
 * spends its cost, and corrects the spend when the real cost is reported.
 */
export class QuotaLedger {
    // What each dispatched request spent per scope (kept past completion for reportCost()).
    private readonly spends = new WeakMap<Request, Spend>();

    constructor(
        private readonly options: ResolvedThrottlingOptions,
        private readonly router: ScopeRouter,
        private readonly states: DomainStateStore,
        private readonly floor: PacingFloor,
        private readonly limits: SharedLimits,
        // The address scope of each request, under throttleBy: 'ip'.
        private readonly ipScopes?: IpScopes,
        // A reported cost changed a spend: queues held for quota may go now.
        private readonly freed?: () => void,
    ) {}

    /**
     * Checks the request's other scopes and every quota against its cost. On success arms their
     * clocks, takes their slots, spends the quotas and returns the extra slots held (undefined when
     * the request has no scopes or quota to clear); otherwise holds the queue and returns false.
     */
    admit(request: Request, entry: DomainQueue, now: number): HeldSlot[] | undefined | false {
        const primaryPolicy = this.router.policyOf(entry.key);
        const ip = this.ipScopes?.scopeOf(request.url, now);
        if (ip === 'pending') {
            // Its host's first DNS answer is on its way: this domain waits for it, the others go on.
            entry.holdUntil(this.ipScopes!.hold(request.url, entry, now));
            return false;
        }
        const declared = this.router.declaresScopes(request);
        if (!declared && !primaryPolicy.quota && ip === undefined) return undefined;
        const { primaryCost, extras } = this.costsOf(request, entry, declared);
        if (ip !== undefined && !extras.some(([scope]) => scope === ip)) extras.push([ip, 1]);
        const blockedUntil = this.blockedUntil(entry, primaryCost, extras, now);
        if (blockedUntil > now) {
            entry.holdUntil(blockedUntil);
            return false;
        }
        const held: HeldSlot[] = [];
        const spend: Spend = { at: now, costs: [[entry.key, primaryCost]], reservations: [] };
        this.states.update(entry.key, (s) => s.spend(now, primaryCost, primaryPolicy.quota));
        for (const [scope, cost] of extras) {
            const policy = this.router.policyOf(scope);
            const reservation = this.states.update(scope, (s) => {
                s.spend(now, cost, policy.quota);
                return s.dispatch(now, this.floor.ms, policy, this.options.random);
            });
            held.push({ scope, slot: reservation.slot });
            spend.costs.push([scope, cost]);
            spend.reservations.push([scope, reservation]);
        }
        this.spends.set(request, spend);
        return held;
    }

    /** What an admitted request spends per scope (its queue's first); undefined when it had nothing to clear. */
    costsSpent(request: Request): readonly (readonly [string, number])[] | undefined {
        return this.spends.get(request)?.costs;
    }

    /** Remembers what the request spent in shared quotas, so a reported cost corrects them too. */
    noteShared(request: Request, shared: SharedSpend[]): void {
        const spend = this.spends.get(request);
        if (spend && shared.length > 0) spend.shared = [...shared];
    }

    /** Undoes an admission (the shared clock said not yet): spends refunded, other scopes' windows and slots given back. */
    undo(request: Request): void {
        const spend = this.spends.get(request);
        if (!spend) return;
        this.spends.delete(request);
        for (const [scope, cost] of spend.costs) {
            const policy = this.router.policyOf(scope);
            this.states.update(scope, (s) => s.adjustSpend(spend.at, -cost, policy.quota));
        }
        for (const [scope, reservation] of spend.reservations) {
            this.states.update(scope, (s) => s.cancelDispatch(reservation));
        }
    }

    /**
     * Corrects the quota spend of a request once its real cost is known: `cost` replaces the estimate
     * in `scope` (default: every scope the request spent in). Returns whether anything changed.
     */
    reportCost(request: Request, cost: number, scope?: string): boolean {
        const spend = this.spends.get(request);
        if (!spend) return false;
        const target = scope === undefined ? undefined : normalizeScope(scope, this.options.throttleBy);
        for (const pair of spend.costs) {
            if (target !== undefined && pair[0] !== target) continue;
            const delta = cost - pair[1];
            pair[1] = cost;
            const policy = this.router.policyOf(pair[0]);
            this.states.update(pair[0], (s) => s.adjustSpend(spend.at, delta, policy.quota));
            for (const shared of spend.shared ?? []) if (shared.key === pair[0]) this.limits.adjust(shared, delta);
        }
        this.freed?.();
        return true;
    }

    /** The request's cost in its queue's scope, and the other scopes it must clear with their costs. */
    private costsOf(request: Request, entry: DomainQueue, declared: boolean) {
        const scopes = declared ? this.router.scopesOf(request) : undefined;
        const primaryCost = scopes && scopes.primary === entry.key ? scopes.primaryCost : 1;
        let extras: [string, number][] = [];
        if (scopes) {
            extras =
                scopes.primary === entry.key
                    ? scopes.extras
                    : [[scopes.primary, scopes.primaryCost] as [string, number], ...scopes.extras];
        }
        return { primaryCost, extras: extras.filter(([scope]) => scope !== entry.key) };
    }

    /** Until when the queue's quota or another scope holds the request (≤ now: it may go). */
    private blockedUntil(entry: DomainQueue, primaryCost: number, extras: [string, number][], now: number): number {
        let blockedUntil = 0;
        const primaryPolicy = this.router.policyOf(entry.key);
        const primary = this.states.read(entry.key);
        if (primary && primaryPolicy.quota && !primary.limits.quotaAllows(now, primaryCost, primaryPolicy.quota)) {
            blockedUntil = nextQuotaWindow(now, primaryPolicy.quota);
        }
        for (const [scope, cost] of extras) {
            const policy = this.router.policyOf(scope);
            const state = this.states.update(scope, (s) => s);
            let at = readyAt(state, now, policy);
            if (policy.quota && !state.limits.quotaAllows(now, cost, policy.quota)) {
                at = Math.max(at, nextQuotaWindow(now, policy.quota));
            }
            // A scope whose slots are all busy frees one on a completion; look again shortly.
            if (at === Number.POSITIVE_INFINITY) at = now + BUSY_SCOPE_RECHECK_MS;
            if (at > now) blockedUntil = Math.max(blockedUntil, at);
        }
        return blockedUntil;
    }
}
