import { readdir } from 'node:fs/promises';

import type { Configuration } from '@crawlee/core';
import { Configuration as CrawleeConfiguration } from '@crawlee/core';

/**
 * Names of the request queues a storage holds, including ones left on disk by earlier runs.
 * Crawlee 3.x's local storage lists only the queues opened in this process, so its folder of
 * queues is read too. Best effort: a storage that cannot be listed yields what could be seen.
 */
export async function listStoredQueueNames(config?: Configuration): Promise<Set<string>> {
    return new Set((await listStoredQueues(config)).keys());
}

/**
 * The request queues a storage holds, by name, with the requests each has not handled yet where the
 * storage's listing says (undefined where it does not: a queue found only on disk, or a listing
 * without counts). See {@link listStoredQueueNames}.
 */
export async function listStoredQueues(config?: Configuration): Promise<Map<string, number | undefined>> {
    const client = (config ?? CrawleeConfiguration.getGlobalConfig()).getStorageClient() as unknown as {
        requestQueues(): { list(): Promise<{ items: { name?: string; pendingRequestCount?: unknown }[] }> };
        requestQueuesDirectory?: string;
    };
    const queues = new Map<string, number | undefined>();
    try {
        for (const item of (await client.requestQueues().list()).items) {
            const pending = item.pendingRequestCount;
            if (item.name) queues.set(item.name, typeof pending === 'number' ? pending : undefined);
        }
    } catch {
        // A client that cannot list is fine: the persisted domain list still names our queues.
    }
    if (typeof client.requestQueuesDirectory === 'string') {
        try {
            for (const entry of await readdir(client.requestQueuesDirectory, { withFileTypes: true }))
                if (entry.isDirectory() && !queues.has(entry.name)) queues.set(entry.name, undefined);
        } catch {
            // No folder yet: nothing was ever stored.
        }
    }
    return queues;
}
