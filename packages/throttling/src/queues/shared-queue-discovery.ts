import type { Configuration } from '@crawlee/core';
import { Configuration as CrawleeConfiguration } from '@crawlee/core';

import type { DomainRegistry } from './domain-registry';
import { listStoredQueues } from './stored-queues';

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

/** What one look for other processes' domain queues found. */
export interface Adoption {
    /** Queues reopened: unknown here, with requests not yet handled. */
    adopted: number;
    /** Queues the storage listed (the look's cost: a storage call each on RedisStorageClient). */
    listed: number;
}

/**
 * Domain queues of this manager that other processes opened on the shared storage since this one
 * started (it reopened every stored queue then): each unknown one that holds requests not yet handled
 * is reopened through `reopen`, which registers and schedules it. An empty one is left alone: it may
 * be a domain this process evicted at rest, which would otherwise come back on every look. Nothing to
 * do on local storage.
 */
export async function adoptSharedQueues(
    registry: DomainRegistry,
    config: Configuration | undefined,
    reopen: (key: string) => Promise<void>,
): Promise<Adoption> {
    if (!storageSharedAcrossProcesses(config)) return { adopted: 0, listed: 0 };
    const queues = await listStoredQueues(config);
    const unknown: string[] = [];
    for (const [name, pending] of queues) {
        const key = registry.namespace.domainOf(name);
        if (key !== undefined && pending !== 0 && registry.get(key)?.opened === undefined) unknown.push(key);
    }
    await Promise.all(unknown.map(reopen));
    return { adopted: unknown.length, listed: queues.size };
}
