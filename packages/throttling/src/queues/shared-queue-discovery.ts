import type { Configuration } from '@crawlee/core';
import { Configuration as CrawleeConfiguration } from '@crawlee/core';

import type { DomainRegistry } from './domain-registry';
import { listStoredQueueNames } from './stored-queues';

/**
 * Whether the crawl's storage is shared live by several processes (a storage client says so with
 * `sharesQueuesAcrossProcesses`, as RedisStorageClient does). Local storage is not: what another
 * process writes there is read only on the next start.
 */
export function storageSharedAcrossProcesses(config?: Configuration): boolean {
    const client = (config ?? CrawleeConfiguration.getGlobalConfig()).getStorageClient() as {
        sharesQueuesAcrossProcesses?: unknown;
    };
    return client?.sharesQueuesAcrossProcesses === true;
}

/**
 * Domain queues of this manager that other processes opened on the shared storage since this one
 * started (it reopened every stored queue then): each unknown one is reopened through `reopen`,
 * which registers and schedules it. Answers how many were found. Nothing to do on local storage.
 */
export async function adoptSharedQueues(
    registry: DomainRegistry,
    config: Configuration | undefined,
    reopen: (key: string) => Promise<void>,
): Promise<number> {
    if (!storageSharedAcrossProcesses(config)) return 0;
    const unknown: string[] = [];
    for (const name of await listStoredQueueNames(config)) {
        const key = registry.namespace.domainOf(name);
        if (key !== undefined && registry.get(key)?.opened === undefined) unknown.push(key);
    }
    await Promise.all(unknown.map(reopen));
    return unknown.length;
}
