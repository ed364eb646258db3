import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

import type { RequestQueue } from '@crawlee/core';

import { claimQueueFolder } from './queue-owners';

/** What {@link releaseDeadProcessLocks} did to one queue. */
export interface StaleLockRelease {
    /** Requests a dead process had locked, handed back to the queue. */
    requests: number;
    /** File-lock folders (`<file>.lock`) a process killed mid-write left behind, removed. */
    lockFolders: number;
    /** Left alone because another process recorded on the queue may still be running. */
    skipped: boolean;
}

/** The parts of memory-storage's queue client used here (public methods of its request queue client). */
interface LockClient {
    deleteRequestLock(id: string, options?: { forefront?: boolean }): Promise<void>;
}

/**
 * The folder of a queue in a local storage (memory-storage persisting to disk), or undefined for
 * any other storage, whose locks expire on their own terms.
 */
export function localQueueFolder(queue: RequestQueue, storageClient: unknown): string | undefined {
    const directory = localQueuesDirectory(storageClient);
    return directory !== undefined && queue.name ? join(directory, queue.name) : undefined;
}

/** The folder of a local storage's queues (memory-storage persisting to disk), or undefined. */
export function localQueuesDirectory(storageClient: unknown): string | undefined {
    const client = storageClient as { requestQueuesDirectory?: unknown; persistStorage?: unknown };
    if (typeof client?.requestQueuesDirectory !== 'string' || client.persistStorage === false) return undefined;
    return client.requestQueuesDirectory;
}

/**
 * Hands back the requests of a freshly opened queue that a process no longer running had locked.
 *
 * Crawlee's queue locks up to 25 requests at a time for `requestLockSecs` (65 s under a crawler),
 * and local storage writes the lock into each request's file. A process killed with SIGKILL never
 * releases them, so after a restart they stay invisible until the locks expire; resuming a
 * throttled crawl sat idle for a minute or more. When every process recorded on the queue folder
 * has ended, no lock in it can belong to a live process: they are released, and so are the
 * `*.lock` folders of writes cut short (each would stall the next access to its file for 10 s).
 * If another recorded process may still run, nothing is touched and locks expire as before.
 *
 * Call it once per queue and process, right after opening, before the queue hands anything out;
 * `storageClient` is the one the queue was opened on.
 */
export async function releaseDeadProcessLocks(
    queue: RequestQueue,
    storageClient: unknown,
    now: () => number = Date.now,
): Promise<StaleLockRelease | undefined> {
    const dir = localQueueFolder(queue, storageClient);
    if (!dir) return undefined;
    const claim = await claimQueueFolder(dir);
    if (claim.alreadyOurs || claim.liveOthers.length > 0) return { requests: 0, lockFolders: 0, skipped: true };
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    let lockFolders = 0;
    for (const entry of entries) {
        if (!entry.isDirectory() || !entry.name.endsWith('.lock')) continue;
        await rm(join(dir, entry.name), { recursive: true, force: true });
        lockFolders += 1;
    }
    const client = queue.client as unknown as LockClient;
    let requests = 0;
    const at = now();
    for (const entry of entries) {
        if (!entry.isFile() || !entry.name.endsWith('.json') || entry.name.startsWith('.')) continue;
        if (entry.name.startsWith('__metadata__')) continue;
        const orderNo = await readOrderNo(join(dir, entry.name));
        // Pending requests hold a past timestamp, locked ones their lock's end (negative: forefront).
        if (orderNo === undefined || Math.abs(orderNo) <= at) continue;
        try {
            await client.deleteRequestLock(entry.name.slice(0, -'.json'.length), { forefront: orderNo < 0 });
            requests += 1;
        } catch {
            // Handled or unlocked meanwhile, or a file the storage skipped as cut short: nothing to give back.
        }
    }
    return { requests, lockFolders, skipped: false };
}

async function readOrderNo(file: string): Promise<number | undefined> {
    try {
        const { orderNo } = JSON.parse(await readFile(file, 'utf8')) as { orderNo?: unknown };
        return typeof orderNo === 'number' ? orderNo : undefined;
    } catch {
        return undefined;
    }
}
