import { heldLocally } from '../queues/domain-request-queue';
import type { IRequestManager, Request } from '@crawlee/core';

import type { LayoutStrategy, Windowed } from '../layout/layout-strategy';
import type { DomainQueue } from '../core/domain-queue';
import type { DomainRegistry } from '../queues/domain-registry';
import type { OriginGate } from '../robots/origin-gate';
import type { Scheduler } from '../scheduling/scheduler';
import type { Clock } from '../core/clock';
import { isPromise } from '../core/maybe-promise';
import { boundedCall } from './bounded-call';
import type { Dispatcher, Ticket } from './dispatcher';

/** What serving the domain queues needs. */
export interface DomainFetcherDeps {
    clock: Clock;
    registry: DomainRegistry;
    scheduler: Scheduler;
    dispatcher: Dispatcher;
    gate: OriginGate;
    /** Where a key's requests wait: its own queue, and a line in the frontier window served before it. */
    layout: LayoutStrategy;
}

/** What one attempt at a ready domain came to: a request, nothing, or an origin to check first. */
type Attempt = { request: Request } | { check: DomainQueue; url: string } | 'next';

/**
 * A domain's head request and where it came from: its own queue, or the frontier window (then it is
 * stored, and locked, in `inner`, which gets its completion).
 */
type Head =
    | { request: Request; from: 'queue'; queue: IRequestManager }
    | { request: Request; from: 'window'; inner: IRequestManager; held: Windowed };

/**
 * Serves the domain queues: takes the next ready domain, reserves its window (before any await that
 * another fetch could slip into), fetches its head request and hands it out, or gives everything it
 * took back when the request cannot go yet. Never waits for a clock.
 */
export class DomainFetcher {
    constructor(private readonly deps: DomainFetcherDeps) {}

    async fetch(): Promise<Request | null> {
        for (;;) {
            const entry = this.deps.scheduler.takeReady(this.deps.clock.now());
            if (!entry) return null;
            const attempt = await this.attempt(entry);
            if (attempt === 'next') continue;
            if ('request' in attempt) return attempt.request;
            // Started right before the next look at the ring, so the check holds its domain from then on.
            this.deps.gate.checkIfDue(attempt.check, attempt.url, true);
        }
    }

    private async attempt(entry: DomainQueue): Promise<Attempt> {
        const { scheduler, dispatcher, clock } = this.deps;
        const queue = await this.deps.layout.servedQueue(entry);
        const now = clock.now();
        if (this.deps.gate.books.awaitsCheck(entry)) {
            // Its origin checks go first, at the key's pace.
            this.deps.gate.startDue(entry);
            return 'next';
        }
        // Another fetch may have filed and served the domain while its queue opened.
        if (entry.queued <= 0 || this.deps.gate.books.holds(entry) || dispatcher.readyAt(entry, now) > now) {
            scheduler.touch(entry, now);
            return 'next';
        }
        const opened = dispatcher.open(entry, now);
        const ticket = isPromise(opened) ? await opened : opened;
        if (!ticket) {
            // Held by another process's clock, or the shared clock failed: file the domain again.
            scheduler.touch(entry, now);
            return 'next';
        }
        entry.takeQueued();
        scheduler.touch(entry, now);
        let head: Head | 'lost' | null;
        try {
            head = await this.takeHead(entry, queue);
        } catch (error) {
            this.giveBack(ticket, 1);
            throw error;
        }
        if (head === 'lost') {
            // A windowed request whose lock could not be kept: `inner` hands it out again later.
            this.giveBack(ticket, 0);
            return 'next';
        }
        if (!head) {
            // Our count was ahead of the queue (e.g. requests locked elsewhere): give the slot back.
            this.giveBack(ticket, 0);
            entry.recount(this.deps.layout.windowed(entry));
            return 'next';
        }
        return this.handOutOrHold(ticket, head);
    }

    /** The key's next request: the head of its window line (given a full lock time), else of its queue. */
    private async takeHead(entry: DomainQueue, queue: IRequestManager | undefined): Promise<Head | 'lost' | null> {
        const { layout, registry } = this.deps;
        const held = layout.takeWindowed(entry);
        if (held) {
            if (!(await layout.keepLock(held))) return 'lost';
            return { request: held.request, from: 'window', inner: await registry.getInner(), held };
        }
        if (!queue) return null;
        const request = await this.fetchHead(entry, queue);
        if (!request) return null;
        // Requests the fetch locked for this process beyond the one it took (another process's
        // additions, on a shared storage) wait here for it alone: count them, or they wait until
        // this process has nothing else in flight.
        const locked = heldLocally(queue) ?? 0;
        if (locked > entry.queued) {
            entry.recount(locked);
            this.deps.scheduler.touch(entry, this.deps.clock.now());
        }
        return { request, from: 'queue', queue };
    }

    /** Puts a head request that did not go out back where it came from, at the front. */
    private async putBack(entry: DomainQueue, head: Head): Promise<void> {
        if (head.from === 'window') this.deps.layout.putBack(entry, head.held);
        else await head.queue.reclaimRequest(head.request, { forefront: true });
    }

    /**
     * The head request of a domain's queue, within the crawler's time limit for storage calls: a call
     * that never settles would otherwise keep the window and slot it was opened with (a one-at-a-time
     * domain stuck for good). A request that arrives after the limit is put back at the head.
     */
    private fetchHead(entry: DomainQueue, queue: IRequestManager): Promise<Request | null> {
        const timeoutMs = this.deps.registry.getForwarded('internalTimeoutMillis');
        return boundedCall(
            queue.fetchNextRequest(),
            timeoutMs,
            () => `Fetching from ${entry.queueName}`,
            (late) => {
                if (!late) return;
                void queue.reclaimRequest(late, { forefront: true }).then(
                    () => {
                        entry.addQueued();
                        this.deps.scheduler.touch(entry, this.deps.clock.now());
                    },
                    () => undefined,
                );
            },
        );
    }

    /** Hands the request out, or puts it back at the head when its origin or other scopes say not yet. */
    private async handOutOrHold(ticket: Ticket, head: Head): Promise<Attempt> {
        const { dispatcher, gate, scheduler, clock } = this.deps;
        const { entry, now } = ticket;
        const { request } = head;
        if (gate.isDue(entry, request.url, now, true)) {
            // An origin not checked yet in this process (a domain restored from an earlier run, a new
            // subdomain under a registrable-domain key) or checked too long ago: check it first.
            this.giveBack(ticket, 1);
            await this.putBack(entry, head);
            return { check: entry, url: request.url };
        }
        const admitting = dispatcher.admit(ticket, request);
        const admitted = isPromise(admitting) ? await admitting : admitting;
        if (admitted === false) {
            // Another scope of this request (or a quota, here or shared) says not yet: it waits at the head.
            entry.addQueued();
            await this.putBack(entry, head);
            scheduler.touch(entry, clock.now());
            return 'next';
        }
        // A windowed request is completed (or reclaimed) in `inner`, where it is stored.
        const source = head.from === 'window' ? head.inner : head.queue;
        return { request: dispatcher.commit(ticket, request, source, admitted) };
    }

    /** Rolls a dispatch back and counts `requeue` requests as waiting again. */
    private giveBack(ticket: Ticket, requeue: number): void {
        this.deps.dispatcher.rollback(ticket);
        ticket.entry.addQueued(requeue);
        this.deps.scheduler.touch(ticket.entry, this.deps.clock.now());
    }
}
