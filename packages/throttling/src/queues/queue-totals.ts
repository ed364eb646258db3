import type { IRequestManager } from '@crawlee/core';

import type { DomainRegistry } from './domain-registry';

/** What the totals read. */
export interface QueueTotalsDeps {
    registry: DomainRegistry;
    /**
     * Requests moved out of `inner` into a domain queue: marked handled in `inner` and stored again in
     * their domain queue, so each is subtracted once from what both count.
     */
    movedCount(): number;
}

/** The request counts of the whole manager: `inner` and every domain queue under it, as one queue. */
export class QueueTotals {
    constructor(private readonly deps: QueueTotalsDeps) {}

    async handled(): Promise<number> {
        const { registry } = this.deps;
        const queues: Promise<IRequestManager>[] = [registry.getInner(), ...registry.openQueues()];
        const counts = await Promise.all(queues.map(async (q) => (await q).handledCount()));
        return counts.reduce((a, b) => a + b, 0) - this.deps.movedCount();
    }

    total(): number {
        let total = this.deps.registry.openedInner?.getTotalCount() ?? 0;
        for (const entry of this.deps.registry.all()) total += entry.opened?.getTotalCount() ?? 0;
        return total - this.deps.movedCount();
    }

    pending(): number {
        let pending = this.deps.registry.openedInner?.getPendingCount() ?? 0;
        for (const entry of this.deps.registry.all()) pending += entry.opened?.getPendingCount() ?? 0;
        return pending;
    }
}
