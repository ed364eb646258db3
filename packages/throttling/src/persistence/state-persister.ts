import type { Configuration } from '@crawlee/core';
import { Configuration as CrawleeConfiguration, KeyValueStore } from '@crawlee/core';

import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { PacingFloor } from '../pacing/pacing-floor';
import { adoptSavedState, saveState } from '../pacing/domain-state-codec';
import type { DomainQueue } from '../core/domain-queue';
import type { DomainRegistry } from '../queues/domain-registry';
import { dropQueue } from '../queues/drop-queue';
import { listStoredQueueNames } from '../queues/stored-queues';
import type { Adoption } from '../queues/shared-queue-discovery';
import { adoptSharedQueues } from '../queues/shared-queue-discovery';
import type { LayoutStrategy } from '../layout/layout-strategy';
import type { Clock } from '../core/clock';
import type { LearnedRates } from './learned-rates';
import type { PersistedThrottlingState } from './persisted-state';
import { parsePersistedState, PERSISTED_STATE_VERSION } from './persisted-state';

/** What the persister needs besides the stores. */
export interface StatePersisterDeps {
    options: ResolvedThrottlingOptions;
    config?: Configuration;
    clock: Clock;
    states: DomainStateStore;
    floor: PacingFloor;
    registry: DomainRegistry;
    /** Configured domains: their queues are reopened too. */
    listedDomains: Iterable<string>;
    /** The queue layout, which says whether a listed domain without a stored queue gets one. */
    layout: Pick<LayoutStrategy, 'restoreListed'>;
    /** The furthest ahead a restored clock of `key` may be: the longest wait a live crawl could set. */
    restoreCapMs(key: string): number;
    /** Scope settings changed at run time, to save; and applying them again on resume. */
    scopeUpdates(): Record<string, unknown>;
    restoreScopeUpdates(saved: Record<string, unknown>): void;
    /** A domain's queue was reopened with work: schedule it. */
    restored(entry: DomainQueue): void;
    /** The rates learned by earlier runs: read on first use, written with every save. */
    learned: LearnedRates;
    warn(message: string): void;
}

/**
 * Saves discovered domains and every scope's clocks under `persistStateKey`, and on resume reopens
 * every known queue and restores the clocks; on a purging start drops this manager's old queues.
 */
export class StatePersister {
    // A write in progress, and the one queued behind it (coalesces bursts of saves).
    private saving?: Promise<void>;
    private saveQueued?: Promise<void>;
    // Removes the `persistState` listener when the crawl ends, so the manager can be collected.
    private unsubscribe?: () => void;

    constructor(private readonly deps: StatePersisterDeps) {}

    /** First use: purges earlier runs' queues or restores them, and saves on Crawlee's `persistState`. */
    async start(): Promise<void> {
        const config = this.configuration();
        if (config.get('purgeOnStart')) await this.purgeStoredQueues();
        else await this.restore();
        // After a restore: a scope that resumed its own pacing keeps it.
        await this.deps.learned.load(this.deps.states);
        this.listen();
    }

    /** Saves on Crawlee's `persistState` events (again, after {@link stop}, when a crawl runs again). */
    listen(): void {
        if (this.unsubscribe) return;
        const events = this.configuration().getEventManager();
        this.makeRoomForQueues(events);
        const listener = () => this.saveSoon();
        // Crawlee's EventType is a const enum, which isolated modules cannot read: use its value.
        events.on('persistState' as never, listener);
        this.unsubscribe = () => events.off('persistState' as never, listener);
    }

    /** Whether the storage keeps anything across a crash (memory-only storage loses everything anyway). */
    storagePersists(): boolean {
        return this.configuration().get('persistStorage') !== false;
    }

    /**
     * Saves now. Calls made while a write runs share the next write, so a batch that discovers many
     * domains costs two writes.
     */
    save(): Promise<void> {
        if (this.saveQueued) return this.saveQueued;
        if (this.saving) {
            this.saveQueued = this.saving
                .catch(() => undefined)
                .then(() => {
                    this.saveQueued = undefined;
                    return this.save();
                });
            return this.saveQueued;
        }
        this.saving = this.write().finally(() => {
            this.saving = undefined;
        });
        return this.saving;
    }

    /** Saves in the background; a failure is logged, never thrown. */
    saveSoon(): void {
        void this.save().catch((error) => this.deps.warn(`Saving throttling state failed: ${String(error)}`));
    }

    /**
     * On storage shared live by several processes: reopens the domain queues others opened since
     * this process started, so it serves them too (see shared-queue-discovery).
     */
    adoptSharedQueues(): Promise<Adoption> {
        return adoptSharedQueues(this.deps.registry, this.deps.config, (key) => this.reopen(key));
    }

    /** Stops listening to Crawlee's `persistState` (the crawl ended). */
    stop(): void {
        this.unsubscribe?.();
        this.unsubscribe = undefined;
    }

    private configuration(): Configuration {
        return this.deps.config ?? CrawleeConfiguration.getGlobalConfig();
    }

    private makeRoomForQueues(events: ReturnType<Configuration['getEventManager']>): void {
        // Every domain queue listens to the crawler's events; without room for them, Node warns of a
        // leak once a crawl passes 50 domains.
        const emitter = (
            events as unknown as { events?: { setMaxListeners?(n: number): unknown; getMaxListeners?(): number } }
        ).events;
        const { maxThrottledDomains } = this.deps.options;
        const wanted = 2 * Math.max(maxThrottledDomains, this.deps.registry.size) + 1000;
        if (emitter?.setMaxListeners && (emitter.getMaxListeners?.() ?? 0) < wanted) emitter.setMaxListeners(wanted);
    }

    private async write(): Promise<void> {
        const { states, clock, floor, registry, options, config } = this.deps;
        const saved: PersistedThrottlingState['states'] = {};
        for (const state of states.list()) saved[state.domain] = saveState(state);
        const record: PersistedThrottlingState = {
            version: PERSISTED_STATE_VERSION,
            savedAt: clock.now(),
            floorMs: floor.raisedMs,
            domains: [...registry.persistedKeys()],
            states: saved,
            scopeUpdates: this.deps.scopeUpdates(),
        };
        if (Object.keys(record.scopeUpdates!).length === 0) delete record.scopeUpdates;
        const store = await KeyValueStore.open(null, { config });
        await store.setValue(options.persistStateKey, record);
        await this.deps.learned.save(states.list());
    }

    /** Drops this manager's `throttled-*` queues left by earlier runs (Crawlee purges only default storages). */
    private async purgeStoredQueues(): Promise<void> {
        const { registry, config } = this.deps;
        const names = [...(await listStoredQueueNames(config))].filter((name) => registry.namespace.owns(name));
        await Promise.all(names.map(async (name) => dropQueue(await registry.openByName(name))));
    }

    /** Reopens every known domain's queue and restores the clocks saved by an earlier run. */
    private async restore(): Promise<void> {
        const { registry, states, config } = this.deps;
        const parsed = await this.readRecord();
        if (parsed?.ok) {
            this.deps.floor.raise(parsed.floorMs);
            if (parsed.scopeUpdates) this.deps.restoreScopeUpdates(parsed.scopeUpdates);
            const now = this.deps.clock.now();
            for (const saved of parsed.states) {
                const maxAheadMs = this.deps.restoreCapMs(saved.domain);
                states.update(saved.domain, (state) => adoptSavedState(state, saved, now, maxAheadMs));
            }
        }
        const domains = new Set(parsed?.domains ?? []);
        for (const name of await listStoredQueueNames(config)) {
            const domain = registry.namespace.domainOf(name);
            if (domain !== undefined) domains.add(domain);
        }
        const listed = this.deps.layout.restoreListed([...this.deps.listedDomains].filter((key) => !domains.has(key)));
        for (const key of listed.remember) this.remember(key);
        for (const key of listed.reopen) domains.add(key);
        // Every queue of ours is served, even of a domain no longer listed: no request is stranded.
        await Promise.all([...domains].map((key) => this.reopen(key)));
    }

    private async readRecord(): Promise<ReturnType<typeof parsePersistedState>> {
        const { options, config } = this.deps;
        const store = await KeyValueStore.open(null, { config });
        let parsed: ReturnType<typeof parsePersistedState>;
        try {
            parsed = parsePersistedState(await store.getValue(options.persistStateKey));
        } catch (error) {
            parsed = { ok: false, reason: `it could not be read (${String(error)})`, domains: [] };
        }
        if (parsed && !parsed.ok) {
            this.deps.warn(
                `The throttling state saved under ${options.persistStateKey} is unusable: ${parsed.reason}. Clocks start fresh; known queues are still reopened.`,
            );
        }
        return parsed;
    }

    /** Registers a key and its state, without a queue. */
    private remember(key: string) {
        this.deps.states.update(key, () => undefined);
        return this.deps.registry.register(key);
    }

    private async reopen(key: string): Promise<void> {
        const { registry } = this.deps;
        const entry = this.remember(key);
        const queue = await registry.open(entry);
        if (this.deps.options.storageSharedLive) {
            // Asking a shared queue whether it is empty locks its head for this process (Crawlee
            // locks up to 25), where the processes already crawling it could not take them: read
            // the stored count instead, and let the first fetch lock what this process can send.
            if (await pendingInStorage(queue)) entry.addQueued();
        } else if (!(await queue.isEmpty())) {
            // Without queue metadata on disk the pending count includes handled requests: ask the queue.
            entry.addQueued(Math.max(1, queue.getPendingCount()));
        }
        this.deps.restored(entry);
    }
}

/** Whether a queue's storage counts requests not yet handled (any process's, locked or not), without locking any. */
async function pendingInStorage(queue: object): Promise<boolean> {
    const info = queue as { getInfo?: () => Promise<{ pendingRequestCount?: number } | undefined> };
    if (typeof info.getInfo !== 'function') return true;
    return ((await info.getInfo())?.pendingRequestCount ?? 1) > 0;
}
