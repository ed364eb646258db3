import type { IRequestManager, Request } from '@crawlee/core';

import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { DomainQueue } from '../core/domain-queue';
import type { DomainRegistry } from '../queues/domain-registry';
import type { OriginBooks } from '../robots/origin-books';
import type { SharedClockSync } from '../shared-clock/shared-clock-sync';
import type { Scheduler } from '../scheduling/scheduler';
import type { ScopeRouter } from '../scopes/scope-router';
import type { Clock } from '../core/clock';
import { waitsBriefly } from './brief-wait';
import { FrontierWindow } from './frontier-window';
import { IdleEviction } from './idle-eviction';
import type { ForgetListener } from './idle-eviction';
import type { LayoutStrategy, ListedRestore, Windowed } from './layout-strategy';
import { LockKeeper, lockProlongerOf } from './lock-keeper';

/** Crawlee's lock time when no crawler set one (RequestProvider's default). */
const DEFAULT_LOCK_SECS = 180;
/** How long one look for window lines that no longer wait briefly is reused. */
const LONG_WAIT_LOOK_EVERY_MS = 1_000;
/** Least time between two evictions asked for by the crawler's polls. */
const TIDY_EVERY_MS = 1_000;

/** What the shared layout is built from. */
export interface SharedLayoutDeps {
    options: ResolvedThrottlingOptions;
    clock: Clock;
    registry: DomainRegistry;
    states: DomainStateStore;
    router: ScopeRouter;
    /** When a domain may hand out next (its clocks, slots and holds; Infinity while its slots are busy). */
    readyAt(entry: DomainQueue, now: number): number;
    /** The origin gate's bookkeeping: whether a key is held for its checks, or at rest; forgotten with an evicted key. */
    origins: Pick<OriginBooks, 'holds' | 'atRest' | 'forget'>;
    /** Whether a key is filed to be served (a filed key is not at rest). */
    scheduler: Pick<Scheduler, 'isFiled'>;
    /** Whether this process leases a key's shared clock (a leased key is not at rest). */
    shared: Pick<SharedClockSync, 'holdsLease'>;
    warn(message: string): void;
}

/**
 * `queueLayout: 'shared'`: every request stays in `inner` until fetched from there; a request whose
 * key is not ready waits in the frontier window (still locked in `inner`, the keeper extending its
 * lock) while it fits and its key is ready soon, else in the key's own queue, opened and saved when
 * it first overflows. Idle keys past `maxThrottledDomains` are evicted.
 */
export class SharedLayout implements LayoutStrategy {
    // A held-back request goes behind the key's earlier overflow, in the order they came.
    readonly movesToFront = false;
    readonly window: FrontierWindow;
    readonly locks: LockKeeper;
    readonly eviction: IdleEviction;
    // The last look for lines waiting long, reused for a moment (a full window is asked on every poll).
    private lastLook?: { at: number; lines: DomainQueue[] };
    // When the polls may evict again.
    private nextTidyAt = 0;

    constructor(private readonly deps: SharedLayoutDeps) {
        const { options, clock, registry, states, router, origins, scheduler, shared, warn } = deps;
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
            views: { window: this.window, scheduler, origins, shared },
        });
        // An evicted key met again is a new one: its origins are checked again.
        this.eviction.onForget((_key, entry) => origins.forget(entry));
    }

    /** Every new request goes to `inner`; its key is met when the request is fetched from there. */
    landsInInner(): boolean {
        return true;
    }

    /** A new key evicts idle ones at once, never itself. */
    met(entry: DomainQueue, now: number): void {
        this.eviction.evict(now, entry);
    }

    /** A key's queue is opened only when the window overflows for it (`DomainIntake.ownQueue`). */
    arrive(): undefined {
        return undefined;
    }

    /** Only a key that overflowed the window has a queue of its own. */
    servedQueue(entry: DomainQueue): Promise<IRequestManager> | undefined {
        return entry.opened || entry.opening ? this.deps.registry.open(entry) : undefined;
    }

    windowed(entry: DomainQueue): number {
        return this.window.waiting(entry);
    }

    holdsWindowed(id: string): boolean {
        return this.window.holds(id);
    }

    takeWindowed(entry: DomainQueue): Windowed | undefined {
        return this.window.take(entry);
    }

    keepLock(held: Windowed): Promise<boolean> {
        return this.window.keepLock(held.request, held.lockedUntil);
    }

    putBack(entry: DomainQueue, held: Windowed): void {
        this.window.putBack(entry, held.request, held.lockedUntil);
    }

    holdBriefly(entry: DomainQueue, request: Request, now: number): boolean {
        if (!this.window.admits(entry) || !this.waitsBriefly(entry, now)) return false;
        this.window.file(entry, request);
        return true;
    }

    get windowFull(): boolean {
        return this.window.full;
    }

    /** A listed domain's requests stay in `inner` unless it had a queue of its own. */
    restoreListed(listed: string[]): ListedRestore {
        return { reopen: [], remember: listed };
    }

    onForget(listener: ForgetListener): void {
        this.eviction.onForget(listener);
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
        return waitsBriefly(this.deps.origins.holds(entry), this.deps.readyAt(entry, now), now);
    }

    /**
     * The domains whose window lines no longer wait briefly (a backoff or a longer crawl delay came
     * after they were filed): their requests belong in their own queues. Looked for at most once a second.
     */
    longWaits(now: number): DomainQueue[] {
        if (this.lastLook && now - this.lastLook.at < LONG_WAIT_LOOK_EVERY_MS) {
            return this.lastLook.lines.filter((e) => this.window.waiting(e) > 0);
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
    async release(): Promise<void> {
        const inner = this.deps.registry.openedInner;
        const held = this.window.requests();
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
