import type { IRequestManager, Request } from '@crawlee/core';

import type { LayoutStrategy } from '../layout/layout-strategy';
import type { OriginBooks } from '../robots/origin-books';
import type { DomainIntake } from './domain-intake';
import type { DomainQueue } from '../core/domain-queue';
import type { DomainRegistry } from '../queues/domain-registry';
import { markMoved, movableCopy } from '../queues/moved-requests';
import type { ScopeRouter } from '../scopes/scope-router';
import type { Clock } from '../core/clock';
import { isPromise } from '../core/maybe-promise';
import type { Dispatcher } from '../dispatch/dispatcher';
import type { HandoutLedger } from '../dispatch/handout-ledger';

/** A domain queue that may read a request by id (Crawlee's RequestQueue does; a user's opener may not). */
type Readable = IRequestManager & { getRequest?: (id: string) => Promise<Request | null> };

/** How many held-back requests one fetch may move out of `inner` before giving the slot back. */
const MAX_MOVES_PER_FETCH = 100;

/** What serving `inner` needs. */
export interface InnerDrainDeps {
    clock: Clock;
    router: ScopeRouter;
    registry: DomainRegistry;
    intake: DomainIntake;
    dispatcher: Dispatcher;
    handouts: HandoutLedger;
    /** Where a held-back request waits: the frontier window while it fits and goes soon, else its key's queue. */
    layout: LayoutStrategy;
    /** The origin gate's bookkeeping: a key held for its origin checks does not dispatch. */
    origins: Pick<OriginBooks, 'holds'>;
    warnOnce(message: string): void;
    error(message: string, data: Record<string, unknown>): void;
}

/**
 * Serves `inner` (apify/crawlee#4039: requests outside the domain queues must not escape pacing).
 * A request of a throttled domain is dispatched if its domain is ready, otherwise held back: the
 * layout may keep it in the frontier window (still locked in `inner`: `'shared'`, if its domain will
 * be ready soon and the window has room for it); else it is moved into the domain's queue: copy added
 * first, then the original marked handled; if the add fails, the original goes back to the front of
 * `inner`. While the window is full nothing more is taken from `inner`, except that lines whose
 * domain came to wait long are moved to their own queues first.
 */
export class InnerDrain {
    // Requests moved out of `inner`: marked handled there, so not counted twice.
    private moved = 0;

    constructor(private readonly deps: InnerDrainDeps) {}

    get movedCount(): number {
        return this.moved;
    }

    resetCount(): void {
        this.moved = 0;
    }

    async fetch(): Promise<Request | null> {
        const inner = await this.deps.registry.getInner();
        for (let moves = 0; moves < MAX_MOVES_PER_FETCH; moves++) {
            if (this.deps.layout.windowFull && !(await this.moveLongWaits(inner))) return null;
            const request = await inner.fetchNextRequest();
            if (!request) return null;
            if (this.heldAlready(request)) continue;
            let entry: DomainQueue | null | undefined;
            try {
                entry = await this.deps.intake.target(request, 'skip');
            } catch (error) {
                await inner.reclaimRequest(request, { forefront: true });
                throw error;
            }
            if (!entry) {
                if (entry === null) {
                    const key = this.deps.router.domainKeyOf(request.url);
                    this.deps.warnOnce(`maxThrottledDomains reached: requests of ${key} are served unthrottled.`);
                }
                this.deps.handouts.record(request, { source: inner });
                return request;
            }
            if (await this.movedAlready(entry, request, inner)) continue;
            const dispatched = await this.tryDispatch(entry, request, inner);
            if (dispatched) return dispatched;
            if (!(await this.holdBack(entry, request, inner))) return null;
        }
        return null;
    }

    /**
     * A second copy of a request this manager holds (in the window, or handed out and not yet
     * settled): its lock in `inner` ran out while the storage was away, and `inner` listed it again.
     * Handing it out would crawl the page twice; it is dropped, and the copy held settles it (marked
     * handled, or reclaimed and so listed again).
     */
    private heldAlready(request: Request): boolean {
        const { id } = request;
        if (!id || !(this.deps.handouts.holdsId(id) || this.deps.layout.holdsWindowed(id))) return false;
        this.deps.warnOnce(
            `${request.url} came out of the queue again while this process held it (its lock ran out, the storage away?); the copy is dropped, not crawled twice.`,
        );
        return true;
    }

    /**
     * The original of a request whose move into its key's own queue was cut short: the copy was
     * added there, then the process was killed (or the storage failed) before the original was
     * marked handled here, and `inner` listed it again once its lock lapsed. Dispatched or windowed
     * it would be crawled twice, once from each queue; it is marked moved and handled instead, as
     * the move would have done, and the copy is crawled (or was). Only a key with a queue of its
     * own can hold a copy, so the others cost no storage call; one that has costs a read of it.
     * A failed read gives the request back to the front of `inner`.
     */
    private async movedAlready(entry: DomainQueue, request: Request, inner: IRequestManager): Promise<boolean> {
        if (!request.id || !(entry.opened || entry.opening)) return false;
        let copy: Request | null;
        try {
            const queue: Readable = await this.deps.registry.open(entry);
            if (typeof queue.getRequest !== 'function') return false;
            copy = await queue.getRequest(request.id);
        } catch (error) {
            await inner.reclaimRequest(request, { forefront: true });
            throw error;
        }
        // The same id is the same unique key; a request of another URL under it is not a copy.
        if (!copy || copy.url !== request.url) return false;
        this.deps.warnOnce(
            `${request.url} came out of inner though it had been moved to the queue of ${entry.key} (a move cut short by a kill?); it is crawled from there, not twice.`,
        );
        markMoved(request, entry.key);
        await inner.markRequestHandled(request);
        this.moved += 1;
        return true;
    }

    /**
     * A request whose domain is not ready: into the window if the domain will be ready soon and the
     * window has room for it, else into the domain's queue.
     */
    private async holdBack(entry: DomainQueue, request: Request, inner: IRequestManager): Promise<boolean> {
        if (this.deps.layout.holdBriefly(entry, request, this.deps.clock.now())) {
            this.deps.intake.noteAdded(entry, 1);
            return true;
        }
        return this.moveToOwnQueue(entry, request, inner);
    }

    /**
     * Moves a request of `inner` into its domain's own queue (opened, and saved, on first use): at
     * the front, or behind the domain's earlier overflow in the order they came, as the layout says.
     */
    private async moveToOwnQueue(entry: DomainQueue, request: Request, inner: IRequestManager): Promise<boolean> {
        if (!entry.opened) {
            try {
                await this.deps.intake.ownQueue(entry);
            } catch (error) {
                await inner.reclaimRequest(request, { forefront: true });
                throw error;
            }
        }
        return this.move(entry, request, inner, this.deps.layout.movesToFront);
    }

    /**
     * The window is full: moves the lines whose domain came to wait long (a backoff after they were
     * filed) to their own queues, so the window holds only requests that go soon. False when none did.
     */
    private async moveLongWaits(inner: IRequestManager): Promise<boolean> {
        const { layout, clock } = this.deps;
        let moved = false;
        for (const entry of layout.longWaits(clock.now())) {
            for (let held = layout.takeWindowed(entry); held; held = layout.takeWindowed(entry)) {
                // It leaves the window; the move counts it again in the domain's queue.
                entry.takeQueued();
                if (!(await this.moveToOwnQueue(entry, held.request, inner))) return moved;
                moved = true;
            }
        }
        return moved;
    }

    /** Hands the request out at once if its domain is ready now. */
    private async tryDispatch(
        entry: DomainQueue,
        request: Request,
        inner: IRequestManager,
    ): Promise<Request | undefined> {
        const { dispatcher, clock } = this.deps;
        const now = clock.now();
        if (this.deps.origins.holds(entry) || dispatcher.readyAt(entry, now) > now) return undefined;
        const opened = dispatcher.open(entry, now);
        const ticket = isPromise(opened) ? await opened : opened;
        if (!ticket) return undefined;
        const admitting = dispatcher.admit(ticket, request);
        const admitted = isPromise(admitting) ? await admitting : admitting;
        if (admitted === false) return undefined;
        return dispatcher.commit(ticket, request, inner, admitted);
    }

    /** Moves a held-back request into its domain's queue; false when that failed (it stays in `inner`). */
    private async move(
        entry: DomainQueue,
        request: Request,
        inner: IRequestManager,
        forefront: boolean,
    ): Promise<boolean> {
        try {
            const info = await entry.queue.addRequest(movableCopy(request), { forefront });
            if (!info.wasAlreadyPresent) this.deps.intake.noteAdded(entry, 1);
        } catch (error) {
            this.deps.error(`Could not move a held-back request of ${entry.key} into its queue; it stays in inner.`, {
                url: request.url,
                error: String(error),
            });
            await inner.reclaimRequest(request, { forefront: true });
            return false;
        }
        // Marked, so a start URL passed again after a kill finds where it went (moved-requests.ts).
        markMoved(request, entry.key);
        await inner.markRequestHandled(request);
        this.moved += 1;
        return true;
    }
}
