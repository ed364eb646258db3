import type { Configuration } from '@crawlee/core';
import { KeyValueStore } from '@crawlee/core';

import type { LayoutStrategy } from '../layout/layout-strategy';
import type { OriginBooks } from '../robots/origin-books';
import type { InnerDrain } from './inner-drain';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { PacingRecorder } from '../dispatch/pacing-recorder';
import type { Scheduler } from '../scheduling/scheduler';
import { parsePersistedState } from '../persistence/persisted-state';
import type { DomainRegistry } from '../queues/domain-registry';
import { dropQueue } from '../queues/drop-queue';
import { listStoredQueueNames } from '../queues/stored-queues';

/** What purging forgets besides the queues. */
export interface StoragePurgeDeps {
    registry: DomainRegistry;
    scheduler: Scheduler;
    states: DomainStateStore;
    /** The queue layout, whose windowed requests are given back to `inner` first. */
    layout: Pick<LayoutStrategy, 'release'>;
    /** The origin gate's bookkeeping per key, forgotten with the keys. */
    origins: Pick<OriginBooks, 'clear'>;
    /** Domains listed in `domains`: known again at once, as on a fresh start. */
    listedDomains: ReadonlySet<string>;
    /** The crawl delays robots.txt declared, kept outside the states. */
    recorder: Pick<PacingRecorder, 'clear'>;
    /** The count of requests moved out of `inner` (they were in queues now dropped). */
    innerDrain: Pick<InnerDrain, 'resetCount'>;
    /** The storage of the queues and of the saved state. */
    config?: Configuration;
    /** Key of the saved domain list and clocks. */
    persistStateKey: string;
}

/**
 * `purge()`: the throttled queues dropped (this process's and those earlier runs left in storage)
 * and every domain's state forgotten, the saved one included, so a later start resumes nothing.
 */
export class StoragePurge {
    constructor(private readonly deps: StoragePurgeDeps) {}

    async purge(): Promise<void> {
        const { registry, scheduler, states } = this.deps;
        await this.deps.layout.release();
        await registry.dropDomainQueues();
        await this.dropEarlierRuns();
        this.deps.recorder.clear();
        scheduler.clear();
        this.deps.origins.clear();
        states.clear();
        for (const key of this.deps.listedDomains) states.update(key, () => undefined);
        this.deps.innerDrain.resetCount();
    }

    /**
     * Drops this manager's queues an earlier run left in storage, which this process may never have
     * opened: those the saved domain list names, and those a listing of the storage finds (Crawlee 3's
     * local storage lists only queues opened in this process, so its folder is read too). Then the
     * saved state goes, so its clocks are not adopted by a later start either.
     */
    private async dropEarlierRuns(): Promise<void> {
        const { registry, config, persistStateKey } = this.deps;
        const store = await KeyValueStore.open(null, { config });
        const names = new Set<string>();
        let saved: ReturnType<typeof parsePersistedState>;
        try {
            saved = parsePersistedState(await store.getValue(persistStateKey));
        } catch {
            saved = undefined; // An unreadable record names no queue; the listing still finds them.
        }
        for (const domain of saved?.domains ?? []) names.add(registry.namespace.nameOf(domain));
        for (const name of await listStoredQueueNames(config)) if (registry.namespace.owns(name)) names.add(name);
        await Promise.all([...names].map(async (name) => dropQueue(await registry.openByName(name))));
        if (saved !== undefined) await store.setValue(persistStateKey, null);
    }
}
