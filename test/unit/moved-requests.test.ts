/**
 * queueLayout 'shared' after a kill: a request moved from `inner` to its domain's own queue is marked
 * handled in `inner`; if a kill left the moved copy's file empty (local storage writes request files
 * in place), the start URLs passed again must bring it back, once.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Configuration, Request } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';

import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';

const URLS = ['https://a.com/1', 'https://a.com/2', 'https://b.com/1'];
let dir: string;
beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'moved-requests-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** One process's start on the storage folder: its own storage client, nothing purged. */
function start() {
    const storage = new MemoryStorage({ localDataDirectory: dir, persistStorage: true, writeMetadata: false });
    const config = new Configuration({ storageClient: storage, purgeOnStart: false, persistStorage: true });
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const manager = new ThrottlingRequestManager(
        { domains: 'all', queueLayout: 'shared', delaySecs: 10, clock },
        config,
    );
    return { storage, manager, clock };
}

/** Every request handed out within `ms`, each marked handled. */
async function drain(manager: ThrottlingRequestManager, clock: ManualClock, ms: number): Promise<string[]> {
    const got: string[] = [];
    for (let t = 0; t <= ms; t += 1_000) {
        for (let r = await manager.fetchNextRequest(); r; r = await manager.fetchNextRequest()) {
            got.push(r.url);
            await manager.markRequestHandled(r);
        }
        clock.advance(1_000);
    }
    return got;
}

/** The file local storage keeps a request of `url` in (its id: a cut sha-256 of the unique key). */
function requestFile(queue: string, url: string): string {
    const id = createHash('sha256')
        .update(new Request({ url }).uniqueKey)
        .digest('base64')
        .replace(/(\+|\/|=)/g, '');
    return join(dir, 'request_queues', queue, `${id.slice(0, 15)}.json`);
}

/** A first start: a.com/1 and b.com/1 go out; a.com/2, 10 s from ready, moves to throttled-a.com. */
async function firstStart(): Promise<void> {
    const { storage, manager, clock } = start();
    await manager.addRequestsBatched(URLS, { waitForAllRequestsToBeAdded: true });
    expect(await drain(manager, clock, 0)).toEqual(['https://a.com/1', 'https://b.com/1']);
    await manager.persistState();
    await storage.teardown();
    expect(existsSync(requestFile('throttled-a.com', 'https://a.com/2'))).toBe(true);
}

test('a moved request whose copy a kill emptied comes back when the start URLs are passed again', async () => {
    await firstStart();
    // The kill: the moved copy's file is left empty, and the storage skips it on the next start.
    writeFileSync(requestFile('throttled-a.com', 'https://a.com/2'), '');
    const { storage, manager, clock } = start();
    await manager.addRequestsBatched(URLS, { waitForAllRequestsToBeAdded: true });
    expect(await drain(manager, clock, 10_000)).toEqual(['https://a.com/2']);
    expect(await manager.isFinished()).toBe(true);
    await storage.teardown();
});

test('a moved request whose copy survived is not added twice', async () => {
    await firstStart();
    const { storage, manager, clock } = start();
    await manager.addRequestsBatched(URLS, { waitForAllRequestsToBeAdded: true });
    await manager.addRequest({ url: 'https://a.com/2' });
    expect(await drain(manager, clock, 10_000)).toEqual(['https://a.com/2']);
    expect(await manager.isFinished()).toBe(true);
    await storage.teardown();
});
