import type { SharedFrontier } from '../layout/shared-frontier';
import type { InnerDrain } from '../dispatch/inner-drain';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { PacingRecorder } from '../pacing/pacing-recorder';
import type { Scheduler } from '../scheduling/scheduler';
import type { DomainRegistry } from './domain-registry';

/** What purging forgets besides the queues. */
export interface StoragePurgeDeps {
    registry: DomainRegistry;
    scheduler: Scheduler;
    states: DomainStateStore;
    /** The frontier of `queueLayout: 'shared'`, whose locks in `inner` are given back first. */
    frontier?: SharedFrontier;
    /** Domains listed in `domains`: known again at once, as on a fresh start. */
    listedDomains: ReadonlySet<string>;
    /** The crawl delays robots.txt declared, kept outside the states. */
    recorder: Pick<PacingRecorder, 'clear'>;
    /** The count of requests moved out of `inner` (they were in queues now dropped). */
    innerDrain: Pick<InnerDrain, 'resetCount'>;
}

/** `purge()`: the throttled queues dropped and every domain's state forgotten. */
export class StoragePurge {
    constructor(private readonly deps: StoragePurgeDeps) {}

    async purge(): Promise<void> {
        const { registry, scheduler, states } = this.deps;
        await this.deps.frontier?.release(registry);
        await registry.dropDomainQueues();
        this.deps.recorder.clear();
        scheduler.clear();
        states.clear();
        for (const key of this.deps.listedDomains) states.update(key, () => undefined);
        this.deps.innerDrain.resetCount();
    }
}
