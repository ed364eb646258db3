/**
 * Parity: restarts and purging. Mirrors upstream Crawlee's "picks up requests left in per-domain
 * sub-queues by a previous run", "purge empties per-domain sub-queues it has not touched yet" and
 * "a restart reopens the queues of domains the previous run discovered", and crawlee-python's
 * purge/drop of sub-queues from a previous run. Each "process" is a fresh storage client on one
 * folder of memory-storage, with purgeOnStart off, so only what is on disk carries over.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Configuration } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';
import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';

let dir: string;
// Every storage client opened by a test: their background writes end before the folder goes.
const clients: MemoryStorage[] = [];
beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parity-restarts-'));
});
afterEach(async () => {
    for (const client of clients.splice(0)) await client.teardown();
    rmSync(dir, { recursive: true, force: true });
});

/**
 * One process on the storage folder: its own storage client, nothing purged on start. It starts once
 * the earlier ones' pending background writes have reached the folder, as a process started after
 * another ended would find them.
 */
async function processOn(options: Partial<ThrottlingRequestManagerOptions> = {}) {
    await Promise.all(clients.map((client) => client.teardown()));
    const storage = new MemoryStorage({ localDataDirectory: dir, persistStorage: true, writeMetadata: true });
    clients.push(storage);
    const config = new Configuration({ storageClient: storage, purgeOnStart: false, persistStorage: true });
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const manager = new ThrottlingRequestManager(
        { domains: 'all', queueLayout: 'perDomain', clock, concurrency: 10, ...options },
        config,
    );
    return { manager, clock, storage };
}

/** Everything the manager hands out now, marked handled. */
async function takeAll(manager: ThrottlingRequestManager): Promise<string[]> {
    const got: string[] = [];
    for (let r = await manager.fetchNextRequest(); r; r = await manager.fetchNextRequest()) {
        got.push(r.url);
        await manager.markRequestHandled(r);
    }
    return got;
}

/** A first run that queues two domains' requests and ends before handling them. */
async function leaveWork(options: Partial<ThrottlingRequestManagerOptions> = {}): Promise<void> {
    const { manager } = await processOn(options);
    await manager.addRequestsBatched(['https://a.com/1', 'https://b.com/1', 'https://b.com/2'], {
        waitForAllRequestsToBeAdded: true,
    });
    await manager.persistState();
}

describe('parity: restarts', () => {
    test('upstream "picks up requests left in per-domain sub-queues by a previous run": a restart resumes them', async () => {
        await leaveWork();
        const { manager } = await processOn();
        expect((await takeAll(manager)).sort()).toEqual(['https://a.com/1', 'https://b.com/1', 'https://b.com/2']);
        expect(await manager.isFinished()).toBe(true);
    });

    test('upstream "a restart reopens the queues of domains the previous run discovered" (domains: all)', async () => {
        await leaveWork();
        const { manager } = await processOn();
        expect(await manager.checkReadiness()).toMatchObject({ status: 'ready' });
        expect(manager.getPendingCount()).toBeGreaterThanOrEqual(3);
    });

    test('upstream "purge empties per-domain sub-queues it has not touched yet": nothing is resumed after', async () => {
        await leaveWork();
        const purger = await processOn();
        await purger.manager.purge();
        const { manager } = await processOn();
        expect(await takeAll(manager)).toEqual([]);
        expect(await manager.checkReadiness()).toMatchObject({ status: 'finished' });
    });

    test('crawlee-python "purge empties sub-queues from a previous run", listed domains: found by listing the storage', async () => {
        await leaveWork({ domains: ['a.com', 'b.com'] });
        await (await processOn({ domains: ['a.com', 'b.com'] })).manager.purge();
        const { manager } = await processOn({ domains: ['a.com', 'b.com'] });
        expect(await takeAll(manager)).toEqual([]);
    });

    test('crawlee-python "drop removes sub-queues from a previous run": the next run starts empty', async () => {
        await leaveWork();
        await (await processOn()).manager.drop();
        const { manager } = await processOn();
        expect(await takeAll(manager)).toEqual([]);
        expect(manager.snapshot()).toEqual([]);
    });

    test('a purge also forgets the saved clocks: a later start adopts no backoff of the earlier run', async () => {
        const first = await processOn();
        await first.manager.addRequest({ url: 'https://a.com/1' });
        first.manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/1', waitMs: 50_000 });
        await first.manager.persistState();
        await (await processOn()).manager.purge();
        const { manager } = await processOn();
        await manager.addRequest({ url: 'https://a.com/2' });
        expect(await takeAll(manager)).toEqual(['https://a.com/2']);
    });

    test('a purge leaves another manager’s queues (its own persistStateKey) alone', async () => {
        await leaveWork({ persistStateKey: 'OTHER' });
        await (await processOn()).manager.purge();
        const { manager } = await processOn({ persistStateKey: 'OTHER' });
        expect(await takeAll(manager)).toHaveLength(3);
    });
});
