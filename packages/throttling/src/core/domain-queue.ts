import type { IRequestManager } from '@crawlee/core';

/** What names a key's queue (a `QueueNamespace`). */
export interface QueueNaming {
    nameOf(key: string): string;
}

/**
 * The queue side of one throttled domain, as every layer reads it: its key, its `throttled-<domain>`
 * queue and the count of requests waiting for it, so the scheduler never has to ask the queue whether
 * there is work. What the collaborators keep of a domain they keep themselves, keyed by this record:
 * the scheduler where it is filed, the origin gate its origin checks (`OriginBooks`), the frontier
 * window its line of requests.
 */
export class DomainQueue {
    /** The opened queue; undefined until first use. */
    opened?: IRequestManager;
    /** Opening in progress, so concurrent first uses open it once. */
    opening?: Promise<IRequestManager>;
    /** The write that records this newly discovered domain; its requests wait for it. */
    saved?: Promise<void>;
    // Requests waiting in the queue (and in the frontier window) as far as this process knows.
    private waiting = 0;
    // Until when the head request waits for another of its scopes, a quota, a DNS answer or the shared clock.
    private holdEnd = 0;

    /** Requests waiting in the queue (and in the frontier window) as far as this process knows. */
    get queued(): number {
        return this.waiting;
    }

    /** Counts `count` more requests waiting (added, given back, or found in storage). */
    addQueued(count = 1): void {
        this.waiting += count;
    }

    /** Counts `count` fewer waiting (handed out, or dropped); never below zero. */
    takeQueued(count = 1): void {
        this.waiting = Math.max(0, this.waiting - count);
    }

    /** Sets the count from what the queue itself said (a recount). */
    recount(count: number): void {
        this.waiting = Math.max(0, count);
    }

    /** Until when the domain is held (0, or a time already past, when it is not). */
    get blockedUntil(): number {
        return this.holdEnd;
    }

    /** Holds the domain until `at` at least; a longer hold already running stays. */
    holdUntil(at: number): void {
        this.holdEnd = Math.max(this.holdEnd, at);
    }

    /**
     * Lifts the hold. With `only`, lifts it only if it is still the hold that ended at `only` (a
     * later one set since stays). Answers whether a hold was lifted.
     */
    liftHold(only?: number): boolean {
        if (only !== undefined && this.holdEnd !== only) return false;
        const held = this.holdEnd !== 0;
        this.holdEnd = 0;
        return held;
    }

    /** `naming`: the queue's name, or what names it (asked when needed, so no name is kept per key). */
    constructor(
        readonly key: string,
        private readonly naming: string | QueueNaming,
    ) {}

    /** The name of the key's `throttled-<domain>` queue. */
    get queueName(): string {
        return typeof this.naming === 'string' ? this.naming : this.naming.nameOf(this.key);
    }

    /** The opened queue; only valid after the scheduler opened it. */
    get queue(): IRequestManager {
        if (!this.opened) throw new Error(`The queue ${this.queueName} is used before it was opened`);
        return this.opened;
    }
}
