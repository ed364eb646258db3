import type { IRequestManager, Request } from '@crawlee/core';

import type { DomainQueue } from '../core/domain-queue';
import type { Clock } from '../core/clock';

/**
 * Extends the lock a queue holds on one of its requests by `lockSecs`; resolves to the new expiry
 * (epoch ms). Rejects when the lock is lost (expired and taken, or the request handled elsewhere).
 */
export type LockProlonger = (request: Request, lockSecs: number) => Promise<number>;

/** What the keeper works with. */
export interface LockKeeperDeps {
    clock: Clock;
    /** The lock time of the queue the requests are locked in, in seconds (the crawler sets it). */
    lockSecs(): number;
    /** How to extend a lock; undefined when the queue has none to extend (then nothing expires either). */
    prolonger(): LockProlonger | undefined;
    /** A request whose lock could not be kept: it must not be handed out from the window. */
    lost(request: Request, entry: DomainQueue): void;
    warn(message: string): void;
}

/** Locks extended at once per sweep (storage calls in flight together). */
const PROLONG_BATCH = 20;
/** Least time between two sweeps of the timer, in ms. */
const MIN_SWEEP_EVERY_MS = 1_000;

/**
 * Keeps the locks of the requests waiting in the frontier window alive. A request taken from `inner`
 * is locked there for the queue's lock time; one that waits longer for its domain would come free and
 * be handed out a second time. Every lock is extended once less than half a lock time is left (a
 * sweep runs every quarter of it), and a request leaving the window is given a full lock time first,
 * so it outlives its handling as one fetched straight from the queue does.
 */
export class LockKeeper {
    // Requests in the window, with their domain and when their lock ends (epoch ms).
    private readonly held = new Map<Request, { entry: DomainQueue; until: number }>();
    private timer?: NodeJS.Timeout;
    private sweeping?: Promise<void>;

    constructor(private readonly deps: LockKeeperDeps) {}

    /** Requests whose locks are kept. */
    get size(): number {
        return this.held.size;
    }

    /** Starts keeping the lock of a request just locked (or still locked until `until`). */
    track(request: Request, entry: DomainQueue, until?: number): void {
        const now = this.deps.clock.now();
        this.held.set(request, { entry, until: until ?? now + this.lockMs() });
        this.startTimer();
    }

    /** Stops keeping it (handed out, or lost); returns when its lock ends, if it was kept. */
    untrack(request: Request): number | undefined {
        const held = this.held.get(request);
        this.held.delete(request);
        if (this.held.size === 0) this.stopTimer();
        return held?.until;
    }

    /**
     * Gives a request leaving the window (`until`: when its lock ends) a full lock time, as if just
     * fetched. False when its lock is lost: it must not go out.
     */
    async refresh(request: Request, until: number): Promise<boolean> {
        const prolong = this.deps.prolonger();
        if (!prolong || until - this.deps.clock.now() >= this.lockMs()) return true;
        try {
            await prolong(request, this.deps.lockSecs());
            return true;
        } catch {
            return false;
        }
    }

    /** Extends every lock that ends within half a lock time of `now`; reports the ones it cannot keep. */
    sweep(now = this.deps.clock.now()): Promise<void> {
        this.sweeping ??= this.sweepDue(now).finally(() => {
            this.sweeping = undefined;
        });
        return this.sweeping;
    }

    /** Forgets every request and stops the timer. */
    clear(): void {
        this.held.clear();
        this.stopTimer();
    }

    private async sweepDue(now: number): Promise<void> {
        const prolong = this.deps.prolonger();
        if (!prolong) return;
        const margin = this.lockMs() / 2;
        const due = [...this.held].filter(([, held]) => held.until - now < margin);
        for (let i = 0; i < due.length; i += PROLONG_BATCH) {
            await Promise.all(due.slice(i, i + PROLONG_BATCH).map(([request]) => this.prolongOne(prolong, request)));
        }
    }

    private async prolongOne(prolong: LockProlonger, request: Request): Promise<void> {
        let until: number;
        try {
            until = await prolong(request, this.deps.lockSecs());
        } catch (error) {
            const held = this.held.get(request);
            // Taken out of the window meanwhile: its new holder deals with it.
            if (!held) return;
            this.untrack(request);
            this.deps.warn(
                `Lost the lock of ${request.url} while it waited in the frontier window; it is left in inner to be fetched again: ${String(error)}`,
            );
            this.deps.lost(request, held.entry);
            return;
        }
        const held = this.held.get(request);
        if (held) held.until = until;
    }

    private lockMs(): number {
        return this.deps.lockSecs() * 1000;
    }

    private startTimer(): void {
        if (this.timer || !this.deps.prolonger()) return;
        const every = Math.max(MIN_SWEEP_EVERY_MS, this.lockMs() / 4);
        this.timer = setInterval(() => {
            this.sweep().catch((error) => this.deps.warn(`Keeping frontier window locks failed: ${String(error)}`));
        }, every);
        this.timer.unref();
    }

    private stopTimer(): void {
        if (!this.timer) return;
        clearInterval(this.timer);
        this.timer = undefined;
    }
}

/** The storage client behind a Crawlee RequestQueue, as far as locks go. */
interface LockingClient {
    prolongRequestLock(id: string, options: { lockSecs: number }): Promise<{ lockExpiresAt: Date }>;
}

/**
 * How to extend a lock in `inner`: through its storage client when it is a Crawlee RequestQueue.
 * Undefined for a manager without locks (a RequestList, a custom manager): nothing of it expires.
 */
export function lockProlongerOf(inner: IRequestManager): LockProlonger | undefined {
    const client = (inner as { client?: Partial<LockingClient> }).client;
    if (typeof client?.prolongRequestLock !== 'function') return undefined;
    const locking = client as LockingClient;
    return async (request, lockSecs) => {
        if (!request.id) throw new Error(`${request.url} has no id to prolong its lock by`);
        const { lockExpiresAt } = await locking.prolongRequestLock(request.id, { lockSecs });
        return new Date(lockExpiresAt).getTime();
    };
}
