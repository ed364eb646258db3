import type { IRequestManager, Request } from '@crawlee/core';

/** An origin whose robots.txt stayed unreachable: its requests fail without being sent until `until`. */
export interface OriginBlock {
    /** Epoch ms when the block ends and robots.txt is read again. */
    readonly until: number;
    /** What the last read met, e.g. `answered 503`. */
    readonly reason: string;
    /** Reads that failed in a row. */
    readonly attempts: number;
}

/** What names a key's queue (a `QueueNamespace`). */
export interface QueueNaming {
    nameOf(key: string): string;
}

/**
 * The queue side of one throttled domain: its `throttled-<domain>` queue (under the shared layout,
 * also its line in the frontier window) and the counts the scheduler keeps so it never has to ask
 * the queue whether there is work.
 */
export class DomainQueue {
    /** The opened queue; undefined until first use. */
    opened?: IRequestManager;
    /** Opening in progress, so concurrent first uses open it once. */
    opening?: Promise<IRequestManager>;
    /** Requests waiting in the queue (and in the frontier window) as far as this process knows. */
    queued = 0;
    /**
     * `queueLayout: 'shared'`: the key's requests waiting in the frontier window, oldest first. Each
     * is locked in `inner`, where it stays stored; they are served before the key's own queue.
     */
    windowed?: Request[];
    /** Where the domain sits in the scheduler, so it is never filed twice. */
    scheduled?: 'ring' | 'heap';
    /** Origin checks (robots.txt) running; the domain's requests wait while any runs. */
    gatesPending = 0;
    /**
     * Origin checks due but not started, by origin (the URL to check): each waits for the key's pace.
     * This and the origin bookkeeping below are created on first use and dropped once empty: most keys
     * of a broad crawl never need most of them, and an empty Map costs as much as a small domain state.
     */
    checksDue?: Map<string, string>;
    /** When each origin of the domain was last checked, so the check runs once per origin (and again when stale). */
    checkedOrigins?: Map<string, number>;
    /** Retries each origin's check has had in a row (robots.txt answered 429 or 5xx, or not at all). */
    retriedOrigins?: Map<string, number>;
    /** Origins whose robots.txt stayed unreachable through its retries, and until when (RFC 9309 §2.3.1.4). */
    blockedOrigins?: Map<string, OriginBlock>;
    /** Origins to check again before their next dispatch (that retry, not yet run). */
    retryPending?: Set<string>;
    /** Bumped on every filing in the waiting heap, so older heap items are recognised as stale. */
    heapVersion = 0;
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

    /** Requests are held until its origin checks (robots.txt) finish. */
    get gated(): boolean {
        return this.gatesPending > 0 || this.checksDue !== undefined;
    }

    /** Held only by checks that wait for the key's pace: the scheduler files it so they can start. */
    get awaitsCheck(): boolean {
        return this.checksDue !== undefined;
    }

    /** The opened queue; only valid after the scheduler opened it. */
    get queue(): IRequestManager {
        if (!this.opened) throw new Error(`The queue ${this.queueName} is used before it was opened`);
        return this.opened;
    }
}
