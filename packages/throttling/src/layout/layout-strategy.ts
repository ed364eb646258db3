import type { IRequestManager, Request } from '@crawlee/core';

import type { DomainQueue } from '../core/domain-queue';
import type { ScopedSource } from '../scopes/scope-router';
import type { ForgetListener } from './idle-eviction';

/** A request held in the frontier window, with when its lock in `inner` ends. */
export interface Windowed {
    request: Request;
    lockedUntil: number;
}

/** What saves the list of known keys, so a resumed run reopens a new key's queue (the `StatePersister`). */
export interface KeySaver {
    storagePersists(): boolean;
    save(): Promise<void>;
}

/** What a resumed run does with a listed domain that had no queue stored. */
export interface ListedRestore {
    /** Keys whose queue is opened (and served) at once. */
    reopen: string[];
    /** Keys registered, with their state, and no queue. */
    remember: string[];
}

/**
 * Where requests wait, as one strategy chosen once in `assemble` from `queueLayout`. The intake, the
 * two fetch paths, the persister, the probe and the purge ask it what differs between the layouts and
 * never which layout runs:
 * - `'perDomain'` ({@link PerDomainLayout}): a request goes into its key's queue as it is added;
 * - `'shared'` ({@link SharedLayout}): every request stays in `inner`; a request taken from there
 *   whose key is not ready waits in the frontier window while it fits, else in its key's own queue
 *   (opened then), and idle keys past `maxThrottledDomains` are evicted.
 */
export interface LayoutStrategy {
    /** Whether a new request of `source` is stored in `inner` as it is added, its key met only when fetched from there. */
    landsInInner(source: ScopedSource): boolean;
    /** A key registered by a request just met: saved for a resumed run, or idle keys evicted for it. */
    met(entry: DomainQueue, now: number, keys: KeySaver): void;
    /** Before a request of a key is filed or served: its queue opened, or undefined when nothing to wait for. */
    arrive(entry: DomainQueue): Promise<unknown> | undefined;
    /** The key's own queue to serve, opened; undefined when it has none (its requests wait in the window). */
    servedQueue(entry: DomainQueue): Promise<IRequestManager> | undefined;
    /** Whether a held-back request of `inner` goes to the front of its key's queue (else behind its earlier overflow). */
    readonly movesToFront: boolean;

    /** Requests of `entry` waiting in the window. */
    windowed(entry: DomainQueue): number;
    /** Whether a request with this id waits in the window. */
    holdsWindowed(id: string): boolean;
    /** Takes the head of the key's window line; the caller hands it out (after {@link keepLock}) or puts it back. */
    takeWindowed(entry: DomainQueue): Windowed | undefined;
    /** Gives a request leaving the window a full lock time; false when the lock is lost. */
    keepLock(held: Windowed): Promise<boolean>;
    /** Puts a windowed request that did not go out back at the head of its line. */
    putBack(entry: DomainQueue, held: Windowed): void;
    /** Files a held-back request of `inner` in the window if it fits and its key is ready soon; false otherwise. */
    holdBriefly(entry: DomainQueue, request: Request, now: number): boolean;
    /** Nothing more may be taken from `inner` until a request leaves the window. */
    readonly windowFull: boolean;
    /** Keys whose window lines came to wait long: their requests belong in their own queues. */
    longWaits(now: number): DomainQueue[];
    /** Whether `inner` has work a fetch could take now. */
    innerServable(inner: IRequestManager): Promise<boolean>;

    /** The keys a resumed run reopens or only remembers, of the listed domains that had no queue stored. */
    restoreListed(listed: string[]): ListedRestore;
    /** Evicts keys at rest, at most so often (the crawler's polls ask). */
    tidy(now: number): void;
    /** Calls `listener` with each key evicted from now on. */
    onForget(listener: ForgetListener): void;
    /** Gives every windowed request back to `inner` unlocked (the queues are purged). */
    release(): Promise<void>;
}
