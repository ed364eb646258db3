import type { IRequestManager, Request } from '@crawlee/core';

import type { DomainQueue } from '../core/domain-queue';
import type { SharedHold } from '../shared-clock/shared-limits';

/** A slot a handed-out request holds in a scope other than its queue's (per-request scopes). */
export interface HeldSlot {
    scope: string;
    slot: number;
}

/** Where a handed-out request came from, so its completion or reclaim goes back there. */
export interface Handout {
    source: IRequestManager;
    domain?: DomainQueue;
    /** The concurrency slot it holds in its domain. */
    slot?: number;
    /** Its error count when handed out: a new network error on return is a backoff trigger. */
    errors?: number;
    /** Further scopes it holds a slot in (per-request scopes). */
    extras?: HeldSlot[];
    /** Its slots were given back (a completion ran, even if the queue call then failed). */
    released?: boolean;
    /** Handed out past its domain's error budget, with `noRetry` set by us. */
    unreachable?: boolean;
    /** The paced domain that answered after a redirect to another domain: its success counts there. */
    answeredBy?: string;
    /** Concurrency slots it holds in the shared clock, freed with its own. */
    shared?: SharedHold;
    /** When it was handed out (epoch ms): its answer counts as delivered only after refusals made later. */
    sentAt?: number;
    /** The interval its dispatch armed (ms), counted again from its departure (each hook that sees it leave). */
    intervalMs?: number;
}

/**
 * Which queue handed out each live request, by identity (uniqueKeys may collide across queues),
 * and which requests are being retried for free because their domain refused them.
 */
export class HandoutLedger {
    // Live handouts; dropped once the request's completion or reclaim reached its queue.
    private readonly handouts = new WeakMap<Request, Handout>();
    // retryCount of a refused request before the crawler's error handler raised it.
    private readonly throttledRetries = new WeakMap<Request, number>();
    // Live handouts by request id, so a second copy of one (its lock ran out while storage was away,
    // and the queue listed it again) is recognised.
    private readonly liveIds = new Map<string, number>();

    record(request: Request, handout: Handout): void {
        if (!this.handouts.has(request) && request.id)
            this.liveIds.set(request.id, (this.liveIds.get(request.id) ?? 0) + 1);
        this.handouts.set(request, handout);
    }

    /** Whether a request with this id is handed out and not yet settled. */
    holdsId(id: string): boolean {
        return this.liveIds.has(id);
    }

    get(request: Request): Handout | undefined {
        return this.handouts.get(request);
    }

    /** Forgets a handout once its queue took the request back. */
    settle(request: Request): void {
        if (!this.handouts.delete(request) || !request.id) return;
        const live = (this.liveIds.get(request.id) ?? 1) - 1;
        if (live > 0) this.liveIds.set(request.id, live);
        else this.liveIds.delete(request.id);
    }

    /** Marks a request refused by its domain: its reclaim restores `retryCount`. */
    markThrottledRetry(request: Request): void {
        this.throttledRetries.set(request, request.retryCount);
    }

    /** Restores the retry count of a throttled retry; returns whether the request was one. */
    restoreRetryCount(request: Request): boolean {
        const before = this.throttledRetries.get(request);
        if (before === undefined) return false;
        this.throttledRetries.delete(request);
        request.retryCount = before;
        return true;
    }
}

/** Every scope a handed-out request holds: its queue's, then the others it cleared. */
export function scopeKeysOf(handout: Handout | undefined): string[] {
    return handout?.domain ? [handout.domain.key, ...(handout.extras ?? []).map((e) => e.scope)] : [];
}
