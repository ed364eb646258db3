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
    /** Requests waiting in the queue (and in the frontier window) as far as this process knows. */
    queued = 0;
    /** Held until then because the head request waits for another of its scopes (or a quota). */
    blockedUntil = 0;
    /**
     * The shared clock's `nextAt` this process leased for its request in flight (one-at-a-time
     * domains only, so there is at most one), until the response says when the next may go.
     */
    sharedLease?: number;
    /** The write that records this newly discovered domain; its requests wait for it. */
    saved?: Promise<void>;

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
