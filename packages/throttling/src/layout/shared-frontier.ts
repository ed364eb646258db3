import type { IRequestManager } from '@crawlee/core';

import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { DomainQueue } from '../core/domain-queue';
import type { DomainRegistry } from '../queues/domain-registry';
import type { ScopeRouter } from '../scopes/scope-router';
import type { Clock } from '../core/clock';
import { waitsBriefly } from './brief-wait';
import { FrontierWindow } from './frontier-window';
import { IdleEviction } from './idle-eviction';
import type { LockProlonger } from './lock-keeper';
import { LockKeeper } from './lock-keeper';

/** Crawlee's lock time when no crawler set one (RequestProvider's default). */
const DEFAULT_LOCK_SECS = 180;
/** How long one look for window lines that no longer wait briefly is reused. */
const LONG_WAIT_LOOK_EVERY_MS = 1_000;
/** Least time between two evictions asked for by the crawler's polls. */
const TIDY_EVERY_MS = 1_000;

/** What the shared layout is built from. */
export interface SharedFrontierDeps {
    options: ResolvedThrottlingOptions;
    clock: Clock;
    registry: DomainRegistry;
    states: DomainStateStore;
    router: ScopeRouter;
    /** When a domain may hand out next (its clocks, slots and holds; Infinity while its slots are busy). */
    readyAt(entry: DomainQueue, now: number): number;
    warn(message: string): void;
}

/**
 * The parts of `queueLayout: 'shared'`: the frontier window and the keeper of its locks in `inner`,
 * and the eviction of idle domains past `maxThrottledDomains`.
 */
export class SharedFrontier {
    readonly window: FrontierWindow;
    readonly locks: LockKeeper;
    readonly eviction: IdleEviction;
    // The last look for lines waiting long, reused for a moment (a full window is asked on every poll).
    private lastLook?: { at: number; lines: DomainQueue[] };
    // When the polls may evict again.
    private nextTidyAt = 0;

    constructor(private readonly deps: SharedFrontierDeps) {
        const { options, clock, registry, states, router, warn } = deps;
        this.locks = new LockKeeper({
            clock,
            lockSecs: () => lockSecsOf(registry),
            prolonger: () => (registry.openedInner ? lockProlongerOf(registry.openedInner) : undefined),
            lost: (request, entry) => this.window.drop(entry, request),
            warn,
        });
        this.window = new FrontierWindow(options.frontierWindow, options.frontierWindowPerDomain, this.locks);
        this.eviction = new IdleEviction({
            registry,
            states,
            policyOf: (key) => router.policyOf(key),
            pinned: (key) => router.listedDomains.has(key) || options.scopes.has(key),
            bound: options.maxThrottledDomains,
        });
    }

    /**
     * Evicts idle domains past `maxThrottledDomains`, at most once a second. A new domain evicts at
     * once; this catches the domains that came to rest since, when no new one comes (the crawl winds
     * down). The crawler's pool asks on every poll.
     */
    tidy(now: number): void {
        if (now < this.nextTidyAt || this.deps.registry.size <= this.deps.options.maxThrottledDomains) return;
        this.nextTidyAt = now + TIDY_EVERY_MS;
        this.eviction.evict(now);
    }

    /** Whether a request of `entry` may wait in the window: its domain will be ready soon. */
    waitsBriefly(entry: DomainQueue, now: number): boolean {
        return waitsBriefly(entry, this.deps.readyAt(entry, now), now);
    }

    /**
     * The domains whose window lines no longer wait briefly (a backoff or a longer crawl delay came
     * after they were filed): their requests belong in their own queues. Looked for at most once a second.
     */
    longWaits(now: number): DomainQueue[] {
        if (this.lastLook && now - this.lastLook.at < LONG_WAIT_LOOK_EVERY_MS) {
            return this.lastLook.lines.filter((e) => (e.windowed?.length ?? 0) > 0);
        }
        const lines = [...this.window.lines()].filter((entry) => !this.waitsBriefly(entry, now));
        this.lastLook = { at: now, lines };
        return lines;
    }

    /**
     * Whether `inner` has work a fetch could take now: not while the window is full, unless lines in
     * it wait long (a fetch moves them to their own queues first).
     */
    async innerServable(inner: IRequestManager): Promise<boolean> {
        if (this.window.full && this.longWaits(this.deps.clock.now()).length === 0) return false;
        return !(await inner.isEmpty());
    }

    /** Gives every windowed request back to `inner` unlocked, at the front (the domain queues are purged). */
    async release(registry: DomainRegistry): Promise<void> {
        const inner = registry.openedInner;
        const held = [...this.window.lines()].flatMap((entry) => entry.windowed ?? []);
        this.window.clear();
        if (!inner) return;
        for (const request of held) await inner.reclaimRequest(request, { forefront: true });
    }
}

/** The lock time of `inner`: what the crawler wrote onto the manager, else the queue's own. */
function lockSecsOf(registry: DomainRegistry): number {
    const forwarded = registry.getForwarded('requestLockSecs');
    if (forwarded !== undefined) return forwarded;
    const own = (registry.openedInner as { requestLockSecs?: unknown } | undefined)?.requestLockSecs;
    return typeof own === 'number' && own > 0 ? own : DEFAULT_LOCK_SECS;
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
