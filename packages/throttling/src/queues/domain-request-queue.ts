import { Configuration, RequestQueue } from '@crawlee/core';
import { dirname, join } from 'node:path';

import type { StaleLockRelease } from './stale-locks';
import { releaseDeadProcessLocks } from './stale-locks';

/**
 * Slots of the deduplication cache of each domain queue. Crawlee 3.16+ gives every RequestQueue a
 * cache of a million slots (two arrays, 16 MB, allocated and zeroed when the queue is constructed);
 * with one queue per domain that allocation dominated the cost of a new domain (16 ms each in B3) and
 * 10,000 domains would need 160 GB. The cache only saves storage calls and never answers wrongly (a
 * miss re-submits, and the storage deduplicates), so a domain's queue gets 1,024 slots: 16 KB.
 */
export const DOMAIN_QUEUE_DEDUP_SLOTS = 1 << 10;

type DedupCacheClass = new (size?: number) => { size?: number };

/** The module whose export RequestProvider's constructor reads when it builds its dedup cache. */
interface DedupCacheModule {
    RequestDeduplicationCache?: DedupCacheClass;
}

/**
 * Loaded by file path because `@crawlee/core`'s `exports` map hides it. Absent before 3.16 (no
 * cache there, nothing to shrink) or if a later release moves it; then queues keep Crawlee's cache.
 */
const dedupCacheModule: DedupCacheModule | undefined = (() => {
    try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const mod = require(
            join(dirname(require.resolve('@crawlee/core')), 'storages', 'request_dedup_cache.js'),
        ) as DedupCacheModule;
        return typeof mod.RequestDeduplicationCache === 'function' ? mod : undefined;
    } catch {
        return undefined;
    }
})();

const SmallDedupCache: DedupCacheClass | undefined = dedupCacheModule?.RequestDeduplicationCache
    ? class extends dedupCacheModule.RequestDeduplicationCache {
          constructor(size?: number) {
              super(Math.min(size ?? DOMAIN_QUEUE_DEDUP_SLOTS, DOMAIN_QUEUE_DEDUP_SLOTS));
          }
      }
    : undefined;

/**
 * Swaps the small cache in for the duration of one synchronous constructor call and returns the
 * undo. Nothing else can run in between, so no other queue of the process is affected.
 */
function useSmallDedupCache(): () => void {
    const mod = dedupCacheModule;
    const original = mod?.RequestDeduplicationCache;
    if (!mod || !original || !SmallDedupCache) return () => undefined;
    mod.RequestDeduplicationCache = SmallDedupCache;
    return () => {
        mod.RequestDeduplicationCache = original;
    };
}

/**
 * The RequestQueue behind one `throttled-<domain>` name: Crawlee's own queue (locking, persistence
 * unchanged), built with a deduplication cache sized for one domain.
 * `DomainRequestQueue.open(name, { config })` opens it like `RequestQueue.open`, and on local
 * storage first hands back the requests a killed process had locked (see releaseDeadProcessLocks).
 */
export class DomainRequestQueue extends RequestQueue {
    /** The release of a dead process's locks, run once on this queue's first open. */
    staleLockRelease?: Promise<StaleLockRelease | undefined>;

    constructor(...args: ConstructorParameters<typeof RequestQueue>) {
        const restore = useSmallDedupCache();
        try {
            super(...args);
        } finally {
            restore();
        }
    }

    /**
     * Requests this process's queue head holds locked for it, for the next fetches. On a shared storage one fetch locks several (Crawlee asks for 25), some added by
     * other processes: they are this process's to send, though it did not count them.
     */
    heldLocally(): number {
        return this.queueHeadIds.length();
    }

    static override async open(...args: Parameters<typeof RequestQueue.open>): Promise<DomainRequestQueue> {
        const queue = (await super.open(...args)) as DomainRequestQueue;
        const [, options = {}] = args;
        // Crawlee caches opened queues, so a second open in this process gets the same instance and
        // waits for the same release.
        queue.staleLockRelease ??= releaseDeadProcessLocks(
            queue,
            options.storageClient ?? (options.config ?? Configuration.getGlobalConfig()).getStorageClient(),
        );
        await queue.staleLockRelease;
        return queue;
    }
}

/**
 * Requests `queue`'s head holds locked for this process, for the next fetches (a
 * `DomainRequestQueue`); undefined for a queue of another kind (a user's opener), which cannot say.
 */
export function heldLocally(queue: object | undefined): number | undefined {
    const held = (queue as { heldLocally?: () => number } | undefined)?.heldLocally?.();
    return typeof held === 'number' ? Math.max(0, held) : undefined;
}

/**
 * Shrinks the cache of a queue opened some other way (a user's `requestManagerOpener`), after the
 * fact: the big arrays were allocated, but at least they are not kept.
 */
export function shrinkDedupCache(queue: object): void {
    const holder = queue as { requestSeenCache?: { size?: number } };
    const cache = holder.requestSeenCache;
    if (!cache || typeof cache.constructor !== 'function' || (cache.size ?? 0) <= DOMAIN_QUEUE_DEDUP_SLOTS) return;
    holder.requestSeenCache = new (cache.constructor as DedupCacheClass)(DOMAIN_QUEUE_DEDUP_SLOTS);
}

// Crawlee's StorageManager picks the storage client's method from the class name
// (`RequestQueue` → `client.requestQueue()`), so the subclass must answer to its parent's name.
Object.defineProperty(DomainRequestQueue, 'name', { value: RequestQueue.name });
