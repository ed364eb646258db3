import type { IRequestManager } from '@crawlee/core';
import { Configuration, log, RequestQueue } from '@crawlee/core';

import { ThrottledDomainLimitError } from '../core/errors';
import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { ScopedSource, ScopeRouter } from '../scopes/scope-router';
import { DomainQueue } from '../core/domain-queue';
import { DomainRequestQueue, shrinkDedupCache } from './domain-request-queue';
import { dropQueue } from './drop-queue';
import type { KeyRules } from './key-rules';
import { QueueNamespace } from './queue-namespace';
import { localQueuesDirectory, releaseDeadProcessLocks } from './stale-locks';
import { openRepairingMetadata } from './metadata-repair';

/** Where a request belongs: `inner`, a domain queue (just created or known), or nowhere (over the limit). */
export type Resolution =
    { kind: 'inner' } | { kind: 'domain'; entry: DomainQueue; created: boolean } | { kind: 'overLimit'; key: string };

/** Settings a crawler writes onto its request manager; forwarded to every queue underneath. */
export type ForwardedSetting = 'internalTimeoutMillis' | 'requestLockSecs';

/**
 * The queues underneath the manager: one `throttled-<domain>` queue per throttling key (opened on
 * first use, named within this manager's namespace, at most `maxThrottledDomains` under `'all'`),
 * and `inner` for everything else. The layout's {@link KeyRules} say whether a new key is over the
 * limit, whether a known key moves to the back of the least-recently-used order (for eviction) and
 * which keys a resumed run reopens.
 */
export class DomainRegistry {
    // Queue bookkeeping per throttling key, in discovery order.
    private readonly entries = new Map<string, DomainQueue>();
    // Names this manager's queues apart from other managers' on the same storage.
    readonly namespace: QueueNamespace;
    // The inner manager once opened, and the promise of opening it.
    private inner?: IRequestManager;
    /** The default `inner` on local storage, under a layout that moves requests out of it: a moved request can lose its copy to a kill. */
    innerOnLocalDisk = false;
    /** A key's own queue was opened in this process (reopened from an earlier run included): only then can a request have been moved out of `inner` under the shared layout. */
    keyQueueOpened = false;
    private innerOpening?: Promise<IRequestManager>;
    // Values the crawler wrote, forwarded onto queues opened later too.
    private readonly forwarded: Partial<Record<ForwardedSetting, number>> = {};
    // `touch` bound once, for the rules to call on every known key met.
    private readonly toBack = (entry: DomainQueue) => this.touch(entry);

    constructor(
        private readonly options: ResolvedThrottlingOptions,
        private readonly router: ScopeRouter,
        private readonly rules: KeyRules,
        private readonly config?: Configuration,
    ) {
        this.namespace = new QueueNamespace(options.persistStateKey);
    }

    /** Where a request-like belongs; a new domain queue is registered (not opened) on the way. */
    resolve(source: ScopedSource): Resolution {
        const key = this.router.routeOf(source);
        if (key === undefined) return { kind: 'inner' };
        const known = this.entries.get(key);
        if (known) {
            this.rules.met(known, this.toBack);
            return { kind: 'domain', entry: known, created: false };
        }
        if (!this.rules.roomFor(this.entries.size)) return { kind: 'overLimit', key };
        return { kind: 'domain', entry: this.register(key), created: true };
    }

    /** Moves a key to the back of the eviction order (it was just used). */
    touch(entry: DomainQueue): void {
        if (this.entries.get(entry.key) !== entry) return;
        this.entries.delete(entry.key);
        this.entries.set(entry.key, entry);
    }

    /** The key used least recently (first to evict), if any. */
    leastRecent(): DomainQueue | undefined {
        return this.entries.values().next().value;
    }

    /** Forgets a key's entry (evicted); a later request of the key registers it afresh. */
    forget(entry: DomainQueue): void {
        if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    }

    /**
     * Keys whose queues a resumed run must reopen: every key (`'perDomain'`), or the keys that have a
     * queue of their own (`'shared'`: the rest live in `inner`).
     */
    *persistedKeys(): IterableIterator<string> {
        for (const entry of this.entries.values()) if (this.rules.reopens(entry)) yield entry.key;
    }

    /** Like {@link resolve}, but a domain over the limit throws `ThrottledDomainLimitError`. */
    resolveOrThrow(source: ScopedSource): Exclude<Resolution, { kind: 'overLimit' }> {
        const resolution = this.resolve(source);
        if (resolution.kind === 'overLimit') {
            throw new ThrottledDomainLimitError(this.options.maxThrottledDomains, [resolution.key]);
        }
        return resolution;
    }

    /** The entry of a key, registering it if new (restored domains are not subject to the limit). */
    register(key: string): DomainQueue {
        let entry = this.entries.get(key);
        if (!entry) {
            entry = new DomainQueue(key, this.namespace);
            this.entries.set(key, entry);
        }
        return entry;
    }

    /**
     * Whether `key` is paced here: throttled, and either known or still room for it. A domain served
     * unthrottled from `inner` because `maxThrottledDomains` was reached gets no state, so states stay
     * bounded on broad crawls. The shared layout paces every throttled key (it evicts idle ones instead).
     */
    paces(key: string): boolean {
        if (!this.router.isThrottled(key)) return false;
        return this.entries.has(key) || this.rules.roomFor(this.entries.size) || this.options.scopes.has(key);
    }

    get(key: string): DomainQueue | undefined {
        return this.entries.get(key);
    }

    get size(): number {
        return this.entries.size;
    }

    keys(): IterableIterator<string> {
        return this.entries.keys();
    }

    all(): IterableIterator<DomainQueue> {
        return this.entries.values();
    }

    /** Opens a domain's queue once, however many callers ask at the same time. */
    open(entry: DomainQueue): Promise<IRequestManager> {
        if (entry.opened) return Promise.resolve(entry.opened);
        entry.opening ??= (async () => {
            const queue = await this.openByName(entry.queueName);
            shrinkDedupCache(queue);
            this.forwardTo(queue);
            entry.opened = queue;
            this.keyQueueOpened = true;
            return queue;
        })();
        return entry.opening;
    }

    /** Opens a stored queue of this manager by name (to drop or read it). */
    openByName(name: string): Promise<IRequestManager> {
        const { requestManagerOpener } = this.options;
        if (requestManagerOpener) return requestManagerOpener(name, { config: this.config });
        return this.openLocal(() => DomainRequestQueue.open(name, { config: this.config }), name);
    }

    /** The manager holding requests of unthrottled domains, opened on first use. */
    getInner(): Promise<IRequestManager> {
        if (this.inner) return Promise.resolve(this.inner);
        this.innerOpening ??= (async () => {
            const { inner } = this.options;
            let opened: IRequestManager;
            if (inner === undefined) opened = await this.openDefaultInner();
            else opened = typeof inner === 'function' ? await inner() : inner;
            await this.releaseInnerLocks(opened);
            this.forwardTo(opened);
            this.inner = opened;
            return opened;
        })();
        return this.innerOpening;
    }

    /** The default queue (`RequestQueue.open()` on this manager's configuration). */
    private async openDefaultInner(): Promise<RequestQueue> {
        const id = (this.config ?? Configuration.getGlobalConfig()).get('defaultRequestQueueId') ?? 'default';
        return this.openLocal(() => RequestQueue.open(null, { config: this.config }), id);
    }

    /** Opens a queue, repairing local storage's metadata if interleaved writes left it unreadable. */
    private openLocal<T>(open: () => Promise<T>, idOrName: string): Promise<T> {
        const storage = (this.config ?? Configuration.getGlobalConfig()).getStorageClient();
        return openRepairingMetadata(open, storage, idOrName, (m) => log.warning(m));
    }

    /**
     * On local storage, hands back what a killed process had locked in `inner` (the default queue, or
     * a `RequestQueue` given as `inner`), as each `throttled-<domain>` queue does when opened: requests
     * of unthrottled domains, those a RequestList tandem moved there, and under the shared layout up to
     * `frontierWindow` requests of every domain would otherwise wait out Crawlee's locks after a
     * SIGKILL. Only when no other process recorded on the queue folder still runs (see stale-locks.ts).
     */
    private async releaseInnerLocks(inner: IRequestManager): Promise<void> {
        if (!(inner instanceof RequestQueue)) return;
        const config = (inner as unknown as { config?: Configuration }).config ?? this.config;
        const storageClient = (config ?? Configuration.getGlobalConfig()).getStorageClient();
        await releaseDeadProcessLocks(inner, storageClient);
        if (this.rules.movesOutOfInner && this.options.inner === undefined) {
            this.innerOnLocalDisk = localQueuesDirectory(storageClient) !== undefined;
        }
    }

    /** `inner` if it was opened already. */
    get openedInner(): IRequestManager | undefined {
        return this.inner;
    }

    /** Every domain queue opened or being opened. */
    openQueues(): Promise<IRequestManager>[] {
        return [...this.entries.values()].filter((e) => e.opened || e.opening).map((e) => this.open(e));
    }

    getForwarded(setting: ForwardedSetting): number | undefined {
        return this.forwarded[setting];
    }

    /** Records a crawler setting and writes it onto every queue underneath, now and later. */
    forward(setting: ForwardedSetting, value: number | undefined): void {
        this.forwarded[setting] = value;
        if (this.inner) forwardOne(this.inner, setting, value);
        for (const entry of this.entries.values()) if (entry.opened) forwardOne(entry.opened, setting, value);
    }

    /** Drops every domain queue and forgets them. */
    async dropDomainQueues(): Promise<void> {
        await Promise.all(this.openQueues().map(async (q) => dropQueue(await q)));
        this.entries.clear();
    }

    /** Drops `inner` too. */
    async dropInner(): Promise<void> {
        await dropQueue(await this.getInner());
        this.inner = undefined;
        this.innerOpening = undefined;
    }

    private forwardTo(queue: IRequestManager): void {
        for (const setting of ['internalTimeoutMillis', 'requestLockSecs'] as const) {
            forwardOne(queue, setting, this.forwarded[setting]);
        }
    }
}

function forwardOne(queue: IRequestManager, key: ForwardedSetting, value: number | undefined): void {
    if (value !== undefined) (queue as unknown as Record<string, unknown>)[key] = value;
}
