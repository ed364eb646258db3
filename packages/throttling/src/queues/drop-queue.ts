import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import type { IRequestManager } from '@crawlee/core';
import { RequestQueue, StorageManager } from '@crawlee/core';

import { localQueuesDirectory } from './stale-locks';

/** What `rm` answers when a file lands in a folder while it is being removed (or Windows holds one). */
const FOLDER_RACE_CODES = new Set(['ENOTEMPTY', 'EBUSY', 'EPERM']);

/** Node's own retries for the folder removal below: linear backoff, 20, 40, ... 100 ms. */
const RM_RETRIES = { maxRetries: 5, retryDelay: 20 } as const;

/**
 * Drops a queue (a manager without `drop` is left as it is).
 *
 * On local storage a drop can fail with ENOTEMPTY: memory-storage answers every open with an
 * unawaited rewrite of the queue's `__metadata__.json`, which can land in the folder while the drop
 * removes it. By then the storage has forgotten the queue; what is left is the folder, removed here
 * with Node's retries, and Crawlee's cached instance, closed so that a later open starts afresh.
 * Any other failure is thrown.
 */
export async function dropQueue(queue: IRequestManager): Promise<void> {
    const droppable = queue as IRequestManager & { drop?: () => Promise<void> };
    if (typeof droppable.drop !== 'function') return;
    try {
        await droppable.drop();
    } catch (error) {
        const folder = localFolderOf(queue);
        const code = (error as NodeJS.ErrnoException | undefined)?.code;
        if (folder === undefined || code === undefined || !FOLDER_RACE_CODES.has(code)) throw error;
        await rm(folder, { recursive: true, force: true, ...RM_RETRIES });
        const rq = queue as RequestQueue;
        StorageManager.getManager(rq.constructor as typeof RequestQueue, rq.config).closeStorage(rq);
    }
}

/** The folder of a Crawlee queue on local storage (named, or the default one by its id), else undefined. */
function localFolderOf(queue: IRequestManager): string | undefined {
    if (!(queue instanceof RequestQueue)) return undefined;
    const directory = localQueuesDirectory(queue.config.getStorageClient());
    return directory === undefined ? undefined : join(directory, queue.name ?? queue.id);
}
