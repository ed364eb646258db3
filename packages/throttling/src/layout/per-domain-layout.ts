import type { IRequestManager } from '@crawlee/core';

import type { DomainQueue } from '../core/domain-queue';
import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { DomainRegistry } from '../queues/domain-registry';
import type { KeySaver, LayoutStrategy, ListedRestore, Windowed } from './layout-strategy';

/**
 * `queueLayout: 'perDomain'`: every request of a throttled key goes into the key's own queue as it is
 * added (the queue opened then), a held-back request of `inner` moves to the front of it, and nothing
 * waits in memory: there is no window and no eviction (`maxThrottledDomains` is a hard limit).
 */
export class PerDomainLayout implements LayoutStrategy {
    readonly movesToFront = true;
    readonly windowFull = false;

    constructor(
        private readonly options: ResolvedThrottlingOptions,
        private readonly registry: DomainRegistry,
    ) {}

    landsInInner(): boolean {
        return false;
    }

    met(entry: DomainQueue, _now: number, keys: KeySaver): void {
        // Saved before its first request lands, so a crash in between cannot strand the queue.
        // Storage that does not persist loses everything in a crash anyway.
        if (this.options.domains === 'all' && keys.storagePersists()) entry.saved = keys.save();
    }

    arrive(entry: DomainQueue): Promise<unknown> {
        return this.registry.open(entry);
    }

    servedQueue(entry: DomainQueue): Promise<IRequestManager> {
        return this.registry.open(entry);
    }

    windowed(): number {
        return 0;
    }

    holdsWindowed(): boolean {
        return false;
    }

    takeWindowed(): Windowed | undefined {
        return undefined;
    }

    keepLock(): Promise<boolean> {
        return Promise.resolve(false);
    }

    putBack(entry: DomainQueue): void {
        throw new Error(`${entry.key}: the per-domain layout has no window to put a request back into`);
    }

    holdBriefly(): boolean {
        return false;
    }

    longWaits(): DomainQueue[] {
        return [];
    }

    async innerServable(inner: IRequestManager): Promise<boolean> {
        return !(await inner.isEmpty());
    }

    /** Every listed domain has a queue of its own, so a resumed run opens it. */
    restoreListed(listed: string[]): ListedRestore {
        return { reopen: listed, remember: [] };
    }

    tidy(): void {}

    onForget(): void {}

    async release(): Promise<void> {}
}
