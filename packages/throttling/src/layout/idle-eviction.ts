import type { ResolvedPolicy } from '../pacing/policy';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { DomainQueue } from '../core/domain-queue';
import type { DomainRegistry } from '../queues/domain-registry';
import type { RestViews } from './at-rest';
import { isAtRest } from './at-rest';

/** What eviction works with. */
export interface IdleEvictionDeps {
    registry: DomainRegistry;
    states: DomainStateStore;
    policyOf(key: string): ResolvedPolicy;
    /** Keys never evicted: configured domains and scopes. */
    pinned(key: string): boolean;
    /** Most keys kept (`maxThrottledDomains`). */
    bound: number;
    /** What the window, the scheduler and the origin gate keep of a key, to tell whether it is at rest. */
    views: RestViews;
}

/** Told of every key evicted, to drop what it keeps per key (robots.txt crawl delays and origin checks, reported rates). */
export type ForgetListener = (key: string, entry: DomainQueue) => void;

/** Keys looked at beyond the excess in one call, so a run of busy keys at the front is stepped over. */
const EXTRA_LOOKS = 32;

/**
 * Keeps the shared layout's domain state bounded (Scrapy's scope limit): once more keys are known
 * than `bound`, the least recently used keys at rest (see {@link isAtRest}) are forgotten, their
 * pacing state with them. A key that is not at rest goes to the back of the order and is looked at
 * again later, so each call does a bounded amount of work; while too many keys are busy the bound
 * is exceeded (their work is bounded by the frontier window and the crawl's concurrency).
 */
export class IdleEviction {
    private evictedCount = 0;
    private readonly listeners: ForgetListener[] = [];

    constructor(private readonly deps: IdleEvictionDeps) {}

    /** Keys forgotten so far. */
    get evicted(): number {
        return this.evictedCount;
    }

    /** Calls `listener` with each key evicted from now on. */
    onForget(listener: ForgetListener): void {
        this.listeners.push(listener);
    }

    /** Evicts idle keys (never `keep`, the key just met) until at most `bound` are known, or the look budget is spent. */
    evict(now: number, keep?: DomainQueue): number {
        const { registry } = this.deps;
        let excess = registry.size - this.deps.bound;
        let looks = excess + EXTRA_LOOKS;
        let evicted = 0;
        while (excess > 0 && looks-- > 0) {
            const entry = registry.leastRecent();
            if (!entry) break;
            if (entry === keep || !this.evictable(entry, now)) {
                registry.touch(entry);
                continue;
            }
            registry.forget(entry);
            this.deps.states.delete?.(entry.key);
            for (const listener of this.listeners) listener(entry.key, entry);
            excess -= 1;
            evicted += 1;
        }
        this.evictedCount += evicted;
        return evicted;
    }

    private evictable(entry: DomainQueue, now: number): boolean {
        if (this.deps.pinned(entry.key)) return false;
        return isAtRest(entry, this.deps.views, this.deps.states.read(entry.key), this.deps.policyOf(entry.key), now);
    }
}
