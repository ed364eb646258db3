import { readdir } from 'node:fs/promises';

import type { Configuration } from '@crawlee/core';
import { Configuration as CrawleeConfiguration } from '@crawlee/core';

/**
 * Names of the request queues a storage holds, including ones left on disk by earlier runs.
 * Crawlee 3.x's local storage lists only the queues opened in this process, so its folder of
 * queues is read too. Best effort: a storage that cannot be listed yields what could be seen.
 */
export async function listStoredQueueNames(config?: Configuration): Promise<Set<string>> {
    const client = (config ?? CrawleeConfiguration.getGlobalConfig()).getStorageClient() as unknown as {
        requestQueues(): { list(): Promise<{ items: { name?: string }[] }> };
        requestQueuesDirectory?: string;
    };
    const names = new Set<string>();
    try {
        for (const item of (await client.requestQueues().list()).items) if (item.name) names.add(item.name);
    } catch {
        // A client that cannot list is fine: the persisted domain list still names our queues.
    }
    if (typeof client.requestQueuesDirectory === 'string') {
        try {
            for (const entry of await readdir(client.requestQueuesDirectory, { withFileTypes: true }))
                if (entry.isDirectory()) names.add(entry.name);
        } catch {
            // No folder yet: nothing was ever stored.
        }
    }
    return names;
}
